// /v1/domains: sending domains (docs/domains.md). Thin: tenancy/domains.ts makes the keys, the
// records and the checks; a domain's private keys never reach an answer.
import { z } from 'zod';
import type { Domains } from '../../tenancy/domains.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, listOf } from './schemas.ts';

const DomainCreate = z
  .object({ name: z.string().min(1).max(253).meta({ description: 'The domain to send from, e.g. example.com (IDN allowed).' }) })
  .strict();

const DnsRecordView = z.object({
  purpose: z.enum(['dkim', 'spf', 'dmarc', 'return_path', 'inbound_mx']),
  type: z.enum(['TXT', 'MX']),
  name: z.string(),
  value: z.string().meta({ description: 'What to publish: the TXT text, or the MX host.' }),
  priority: z.number().int().optional().meta({ description: 'MX only.' }),
  required: z
    .boolean()
    .meta({ description: 'Needed for the domain to verify (DKIM and SPF); false: advised (DMARC, return path).' }),
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
  checked_at: z.string().nullable(),
  verified_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const TAGS = ['Domains'];

export function domainRoutes(app: ZodApp, domains: Domains): void {
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
        },
      },
    },
    async (request, reply) => reply.code(201).send(await domains.create(senderOf(request).tenant.id, request.body.name)),
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
        response: { 200: answer('The domain and its records as last checked.', DomainView), 404: refusal('No such domain.') },
      },
    },
    async (request, reply) => reply.code(200).send(await domains.get(senderOf(request).tenant.id, request.params.id)),
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
