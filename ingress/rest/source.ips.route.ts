// The source addresses of direct delivery and their warmup (docs/deliverability.md), on the admin scope.
import { z } from 'zod';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { SourceIps } from '../../gate/source.ips.ts';
import { WarmupChange, WarmupView } from './domains.route.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { listOf } from './schemas.ts';

const SourceIpView = WarmupView.omit({ frozen: true }).extend({
  ip: z.string().meta({ description: 'The local address (GATEPOST_SOURCE_IPS).' }),
});

const IpParam = z.object({ ip: z.string().min(1).max(64) });

/** GET /v1/admin/source-ips and POST /v1/admin/source-ips/:ip/warmup. */
export function sourceIpAdminRoutes(app: ZodApp, ips: SourceIps): void {
  app.get(
    '/v1/admin/source-ips',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'The source addresses direct delivery connects from, each with its warmup',
        response: { 200: answer('Every address GATEPOST_SOURCE_IPS lists, in its order.', listOf(SourceIpView)) },
      },
    },
    async (_request, reply) => reply.code(200).send({ data: await ips.list() }),
  );
  app.post(
    '/v1/admin/source-ips/:ip/warmup',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: "Skip a source address's warmup (it is warm already), or restart its ramp",
        params: IpParam,
        body: WarmupChange,
        response: {
          200: answer("The address's warmup.", SourceIpView),
          400: refusal('Not an action, or a day below 1.'),
          404: refusal('GATEPOST_SOURCE_IPS lists no such address.'),
        },
      },
    },
    async (request, reply) => {
      const { ip } = request.params;
      if (!ips.has(ip)) throw new GatepostError('not_found', `GATEPOST_SOURCE_IPS lists no address ${ip}.`);
      return reply.code(200).send(await ips.setWarmup(ip, request.body));
    },
  );
}
