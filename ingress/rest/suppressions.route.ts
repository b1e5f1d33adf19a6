// /v1/suppressions: the addresses a tenant will not send to. The recipient actors hold the truth;
// the list is their index in the catalog: a suppression is on it once POST answers, a removal
// follows within moments (actors/recipient/suppression.index.ts).
import type { Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError, invalid } from '../../errors/errors.catalog.ts';
import { isValidAddress, normalizeAddress } from '../../mail/address.ts';
import { suppressions } from '../../gate/suppressions.ts';
import type { Catalog, Suppression } from '../../store/catalog.port.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { AddressParam, PageQuery, SuppressionCreate, SuppressionView, pageOf } from './schemas.ts';

const view = ({ tenant_id: _t, ...s }: Suppression) => s;

function address(raw: string): string {
  const a = normalizeAddress(raw);
  if (!isValidAddress(a)) throw invalid([{ field: 'address', message: 'not a valid email address' }]);
  return a;
}

export function suppressionRoutes(app: ZodApp, invoker: Invoker, catalog: Catalog): void {
  const recipients = suppressions(invoker);
  app.get(
    '/v1/suppressions',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Suppressions'],
        summary: 'List suppressed addresses',
        querystring: PageQuery,
        response: { 200: answer('A page of suppressions, by address.', pageOf(SuppressionView)) },
      },
    },
    async (request, reply) => {
      const page = await catalog.listSuppressions(senderOf(request).tenant.id, request.query);
      return reply.code(200).send({ data: page.data.map(view), next_cursor: page.next_cursor });
    },
  );
  app.post(
    '/v1/suppressions',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Suppressions'],
        summary: 'Suppress an address',
        body: SuppressionCreate,
        response: {
          201: answer('The suppression in force (an existing one keeps its first reason).', SuppressionView),
          400: refusal('Not a valid address.'),
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const s = await recipients.suppress(senderOf(request).tenant.id, address(body.address), {
        reason: body.reason,
        detail: body.detail,
      });
      return reply.code(201).send(view(s));
    },
  );
  app.get(
    '/v1/suppressions/:address',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Suppressions'],
        summary: 'Is this address suppressed?',
        params: AddressParam,
        response: {
          200: answer('The suppression in force.', SuppressionView),
          404: refusal('The address is not suppressed.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const s = await recipients.check(senderOf(request).tenant.id, address(params.address));
      if (!s) throw new GatepostError('not_found', `${params.address} is not suppressed.`);
      return reply.code(200).send(view(s));
    },
  );
  app.delete(
    '/v1/suppressions/:address',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Suppressions'],
        summary: 'Remove an address from the suppression list',
        params: AddressParam,
        response: { 204: answer('Removed.'), 404: refusal('The address was not suppressed.') },
      },
    },
    async (request, reply) => {
      const { params } = request;
      if (!(await recipients.unsuppress(senderOf(request).tenant.id, address(params.address)))) {
        throw new GatepostError('not_found', `${params.address} is not suppressed.`);
      }
      return reply.code(204).send();
    },
  );
}
