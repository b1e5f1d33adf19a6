// /v1/domains: sending domains (docs/domains.md). Thin: tenancy/domains.ts makes the keys, the
// records and the checks; a domain's private keys never reach an answer.
import { z } from 'zod';
import type { Domains } from '../../tenancy/domains.ts';
import { ErrorBody, route, type AnyRoute } from './route.ts';
import { IdParam, listOf } from './schemas.ts';

const DomainCreate = z
  .object({ name: z.string().min(1).max(253).meta({ description: 'The domain to send from, e.g. example.com (IDN allowed).' }) })
  .strict();

const DnsRecordView = z.object({
  purpose: z.enum(['dkim', 'spf', 'dmarc', 'return_path']),
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

const TAG = 'Domains';

export function domainRoutes(domains: Domains): AnyRoute[] {
  return [
    route({
      method: 'POST',
      url: '/v1/domains',
      tag: TAG,
      summary: 'Add a sending domain',
      access: 'manage',
      body: DomainCreate,
      responses: {
        201: { description: 'The domain, pending, with the DNS records to publish.', schema: DomainView },
        400: { description: 'Not a domain name.', schema: ErrorBody },
        409: { description: 'The tenant has it already, or another tenant verified it.', schema: ErrorBody },
      },
      handler: async ({ body, sender }) => ({ status: 201, body: await domains.create(sender.tenant.id, body.name) }),
    }),
    route({
      method: 'GET',
      url: '/v1/domains',
      tag: TAG,
      summary: 'List sending domains',
      access: 'manage',
      responses: { 200: { description: 'Every domain of the tenant, oldest first.', schema: listOf(DomainView) } },
      handler: async ({ sender }) => ({ status: 200, body: { data: await domains.list(sender.tenant.id) } }),
    }),
    route({
      method: 'GET',
      url: '/v1/domains/:id',
      tag: TAG,
      summary: 'Get a sending domain',
      access: 'manage',
      params: IdParam,
      responses: {
        200: { description: 'The domain and its records as last checked.', schema: DomainView },
        404: { description: 'No such domain.', schema: ErrorBody },
      },
      handler: async ({ params, sender }) => ({ status: 200, body: await domains.get(sender.tenant.id, params.id) }),
    }),
    route({
      method: 'POST',
      url: '/v1/domains/:id/verify',
      tag: TAG,
      summary: 'Look the DNS records up and verify the domain',
      access: 'manage',
      params: IdParam,
      responses: {
        200: { description: 'The domain, with what each record showed.', schema: DomainView },
        404: { description: 'No such domain.', schema: ErrorBody },
        409: { description: 'Another tenant verified this name first.', schema: ErrorBody },
      },
      handler: async ({ params, sender }) => ({ status: 200, body: await domains.verify(sender.tenant.id, params.id) }),
    }),
    route({
      method: 'DELETE',
      url: '/v1/domains/:id',
      tag: TAG,
      summary: 'Delete a sending domain',
      access: 'manage',
      params: IdParam,
      responses: {
        204: { description: 'Deleted: mail from it is no longer signed, and refused with direct delivery.' },
        404: { description: 'No such domain.', schema: ErrorBody },
      },
      handler: async ({ params, sender }) => {
        await domains.delete(sender.tenant.id, params.id);
        return { status: 204 };
      },
    }),
  ];
}
