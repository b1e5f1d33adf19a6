// The reputation breakers (docs/deliverability.md): the tenant reads its own; the operator resets a tenant's.
import { z } from 'zod';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Reputations } from '../../gate/reputation.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam } from './schemas.ts';

const rate = (what: string) => z.number().meta({ description: `${what} over the sample, a fraction (0.04 is 4 %).` });

const BreakerView = z.object({
  status: z.enum(['closed', 'warning', 'open', 'half_open']).meta({
    description:
      'closed: mail goes as usual. warning: a rate passed its warning threshold. open: broadcasts wait, transactional mail goes at a trickle; nothing is refused or lost. half_open: after the cool-down, mail goes again and the next sample closes or opens it.',
  }),
  since: z.string().meta({ description: 'When the breaker came to this status.' }),
  reason: z.string().nullable().meta({ description: 'Why it did.' }),
  window: z.object({
    sample: z.number().int().meta({ description: 'Deliveries in the rolling window: sent, hard-bounced and blocked.' }),
    sent: z.number().int(),
    hard_bounces: z.number().int(),
    blocks: z.number().int().meta({ description: 'Refusals with a 5.7.x (policy, blocklist) status.' }),
    complaints: z.number().int(),
    bounce_rate: rate('Hard bounces'),
    complaint_rate: rate('Complaints'),
    block_rate: rate('Blocks'),
  }),
  half_open_at: z.string().nullable().meta({ description: 'While open: when the cool-down ends.' }),
});

export const ReputationView = BreakerView.extend({
  domains: z
    .array(BreakerView.extend({ domain: z.string().meta({ description: 'The sending domain (a verified From domain).' }) }))
    .meta({
      description:
        "Each sending domain's own breaker, over its own mail: one opening holds that domain's mail only. A domain shows once its mail has an outcome.",
    }),
});

/** GET /v1/reputation, on the keyed scope. */
export function reputationRoutes(app: ZodApp, breakers: Reputations): void {
  app.get(
    '/v1/reputation',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Deliverability'],
        summary:
          "The tenant's reputation breakers, its own and each sending domain's: status and the rates of the rolling window",
        response: { 200: answer('The breaker.', ReputationView) },
      },
    },
    async (request, reply) => reply.code(200).send(await breakers.read(senderOf(request).tenant.id)),
  );
}

/** POST /v1/admin/tenants/:id/reputation/reset, on the admin scope. */
export function reputationAdminRoutes(app: ZodApp, breakers: Reputations, catalog: Catalog): void {
  app.post(
    '/v1/admin/tenants/:id/reputation/reset',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: "Reset a tenant's reputation breakers (its own and each sending domain's): closed, with an empty window",
        params: IdParam,
        response: { 200: answer('The breaker.', ReputationView), 404: refusal('No such tenant.') },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await catalog.getTenant(id))) throw new GatepostError('not_found', `No tenant ${id}.`);
      return reply.code(200).send(await breakers.reset(id));
    },
  );
}
