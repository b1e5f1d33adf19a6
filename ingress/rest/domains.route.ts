// /v1/domains: sending domains (docs/domains.md). Thin: tenancy/domains.ts makes the keys, the
// records and the checks; a domain's private keys never reach an answer. A domain's warmup
// (docs/deliverability.md) is its tenant's actor's: shown on GET /v1/domains/:id, and set by the
// operator on /v1/admin/tenants/:id/domains/:domain_id/warmup.
import { z } from 'zod';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Reputations } from '../../gate/reputation.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { Domains } from '../../tenancy/domains.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, listOf } from './schemas.ts';

const TrackingHost = z.string().max(253).meta({
  description:
    "A host name under the domain (track.example.com) whose CNAME points at Gatepost: once verification finds it, the domain's tracked links, open pixel and unsubscribe links use it.",
});

const DomainCreate = z
  .object({
    name: z.string().min(1).max(253).meta({ description: 'The domain to send from, e.g. example.com (IDN allowed).' }),
    tracking_host: TrackingHost.optional(),
  })
  .strict();

const DomainPatch = z
  .object({ tracking_host: TrackingHost.nullable().meta({ description: 'A new tracking host, or null for none.' }) })
  .strict();

const DnsRecordView = z.object({
  purpose: z.enum(['dkim', 'spf', 'dmarc', 'return_path', 'inbound_mx', 'tracking']),
  type: z.enum(['TXT', 'MX', 'CNAME']),
  name: z.string(),
  value: z.string().meta({ description: 'What to publish: the TXT text, or the MX or CNAME target host.' }),
  priority: z.number().int().optional().meta({ description: 'MX only.' }),
  required: z.boolean().meta({
    description: 'Needed for the domain to verify (DKIM and SPF); false: advised (DMARC, return path, inbound MX, tracking).',
  }),
  status: z.enum(['pending', 'verified', 'failed']),
  found: z
    .array(z.string())
    .nullable()
    .meta({ description: 'What the last verification found at the name; null before the first.' }),
  error: z.string().nullable().meta({ description: 'The look-up failure (ENOTFOUND, ENODATA, ETIMEOUT…), if any.' }),
});

const DomainView = z.object({
  id: z.string().meta({ description: 'dom_…' }),
  name: z.string().meta({ description: 'Lower case, international names as IDNA A-labels.' }),
  status: z.enum(['pending', 'verified']),
  records: z.array(DnsRecordView),
  tracking_host: z.string().nullable().meta({ description: 'The tracking host, or null for none.' }),
  checked_at: z.string().nullable(),
  verified_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const WarmupView = z.object({
  status: z.enum(['off', 'warming', 'warm']).meta({
    description:
      'off: warmup is turned off (GATEPOST_WARMUP). warming: on the ramp, its caps hold. warm: at the ramp end, or skipped by the operator; an idle spell (GATEPOST_WARMUP_IDLE) starts the ramp again.',
  }),
  day: z.number().int().nullable().meta({ description: 'The day of the ramp, from 1; null unless warming.' }),
  daily_cap: z.number().int().nullable().meta({ description: "Today's cap; null unless warming." }),
  window_cap: z
    .number()
    .int()
    .nullable()
    .meta({ description: "The cap of a window (an hour by default): the day's shared over its windows." }),
  used_today: z.number().int(),
  used_this_window: z.number().int(),
  next_window: z.string().nullable().meta({ description: 'When the next window starts: mail over a cap is deferred to it.' }),
  frozen: z
    .boolean()
    .meta({ description: "The ramp stands still (its day does not advance): the domain's or tenant's breaker is not closed." }),
});

const DomainWarmupView = WarmupView.extend({
  providers: z
    .array(
      z.object({
        provider: z
          .string()
          .meta({
            description: "The destination mailbox provider: google, microsoft, yahoo, apple, or an MX host's last two labels.",
          }),
        daily_cap: z.number().int().meta({ description: "Its share of today's cap (GATEPOST_WARMUP_PROVIDER_SHARE)." }),
        window_cap: z.number().int().meta({ description: "Its share of a window's cap." }),
        used_today: z.number().int(),
        used_this_window: z.number().int(),
      }),
    )
    .meta({
      description:
        'Each provider the domain sent to today, by name, and its share of the caps: empty unless warming with a share below 100 %.',
    }),
});

const DomainWithWarmup = DomainView.extend({ warmup: DomainWarmupView });

export const WarmupChange = z
  .discriminatedUnion('action', [
    z.object({ action: z.literal('skip').meta({ description: 'The domain is warm already: no caps.' }) }).strict(),
    z
      .object({
        action: z.literal('restart'),
        day: z.number().int().min(1).max(1000).default(1).meta({ description: 'The ramp day to restart at; 1 by default.' }),
      })
      .strict(),
  ])
  .meta({ description: 'skip: the domain is warm. restart: back on the ramp at `day`, its counts emptied.' });

const DomainWarmupParams = z.object({ id: z.string().min(1).max(128), domain_id: z.string().min(1).max(128) });

const TAGS = ['Domains'];

export function domainRoutes(app: ZodApp, domains: Domains, warmups: Reputations): void {
  app.post(
    '/v1/domains',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Add a sending domain',
        body: DomainCreate,
        response: {
          201: answer('The domain, pending, with the DNS records to publish.', DomainView),
          400: refusal('Not a domain name.'),
          409: refusal('The tenant has it already, or another tenant verified it.'),
          422: refusal('`tracking_host_invalid`: the tracking host is no host name under the domain.'),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await domains.create(senderOf(request).tenant.id, request.body.name, request.body.tracking_host ?? null)),
  );
  app.get(
    '/v1/domains',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'List sending domains',
        response: { 200: answer('Every domain of the tenant, oldest first.', listOf(DomainView)) },
      },
    },
    async (request, reply) => reply.code(200).send({ data: await domains.list(senderOf(request).tenant.id) }),
  );
  app.get(
    '/v1/domains/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get a sending domain',
        params: IdParam,
        response: {
          200: answer('The domain, its records as last checked, and its warmup.', DomainWithWarmup),
          404: refusal('No such domain.'),
        },
      },
    },
    async (request, reply) => {
      const tenantId = senderOf(request).tenant.id;
      const domain = await domains.get(tenantId, request.params.id);
      return reply.code(200).send({ ...domain, warmup: await warmups.warmup(tenantId, domain.name) });
    },
  );
  app.patch(
    '/v1/domains/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: "Change a sending domain's tracking host",
        params: IdParam,
        body: DomainPatch,
        response: {
          200: answer("The domain; a new tracking host's CNAME is pending until the next verification.", DomainView),
          404: refusal('No such domain.'),
          422: refusal('`tracking_host_invalid`: the tracking host is no host name under the domain.'),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(200)
        .send(await domains.setTrackingHost(senderOf(request).tenant.id, request.params.id, request.body.tracking_host)),
  );
  app.post(
    '/v1/domains/:id/verify',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Look the DNS records up and verify the domain',
        params: IdParam,
        response: {
          200: answer('The domain, with what each record showed.', DomainView),
          404: refusal('No such domain.'),
          409: refusal('Another tenant verified this name first.'),
        },
      },
    },
    async (request, reply) => reply.code(200).send(await domains.verify(senderOf(request).tenant.id, request.params.id)),
  );
  app.delete(
    '/v1/domains/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Delete a sending domain',
        params: IdParam,
        response: {
          204: answer('Deleted: mail from it is no longer signed, and refused with direct delivery.'),
          404: refusal('No such domain.'),
        },
      },
    },
    async (request, reply) => {
      await domains.delete(senderOf(request).tenant.id, request.params.id);
      return reply.code(204).send();
    },
  );
}

/** POST /v1/admin/tenants/:id/domains/:domain_id/warmup, on the admin scope. */
export function domainAdminRoutes(app: ZodApp, warmups: Reputations, catalog: Catalog): void {
  app.post(
    '/v1/admin/tenants/:id/domains/:domain_id/warmup',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: "Skip a sending domain's warmup (it is warm already), or restart its ramp",
        params: DomainWarmupParams,
        body: WarmupChange,
        response: {
          200: answer("The domain's warmup.", DomainWarmupView),
          400: refusal('Not an action, or a day below 1.'),
          404: refusal('No such tenant, or no such domain of it.'),
        },
      },
    },
    async (request, reply) => {
      const { id, domain_id } = request.params;
      if (!(await catalog.getTenant(id))) throw new GatepostError('not_found', `No tenant ${id}.`);
      const domain = await catalog.getDomain(id, domain_id);
      if (!domain) throw new GatepostError('not_found', `No sending domain ${domain_id} of tenant ${id}.`);
      return reply.code(200).send(await warmups.setWarmup(id, domain.name, request.body));
    },
  );
}
