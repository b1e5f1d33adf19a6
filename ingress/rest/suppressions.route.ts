// /v1/suppressions: the addresses a tenant will not send to. The recipient actors hold the truth
// (the gate asks them); the list is their index in the catalog and follows within moments.
import type { Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError, invalid } from '../../errors/errors.catalog.ts';
import { isValidAddress, normalizeAddress } from '../../mail/address.ts';
import { suppressions } from '../../gate/suppressions.ts';
import type { Catalog, Suppression } from '../../store/catalog.port.ts';
import { ErrorBody, route, type AnyRoute } from './route.ts';
import { AddressParam, PageQuery, SuppressionCreate, SuppressionView, pageOf } from './schemas.ts';

const view = ({ tenant_id: _t, ...s }: Suppression) => s;

function address(raw: string): string {
  const a = normalizeAddress(raw);
  if (!isValidAddress(a)) throw invalid([{ field: 'address', message: 'not a valid email address' }]);
  return a;
}

export function suppressionRoutes(invoker: Invoker, catalog: Catalog): AnyRoute[] {
  const recipients = suppressions(invoker);
  return [
    route({
      method: 'GET',
      url: '/v1/suppressions',
      tag: 'Suppressions',
      summary: 'List suppressed addresses',
      access: 'manage',
      query: PageQuery,
      responses: { 200: { description: 'A page of suppressions, by address.', schema: pageOf(SuppressionView) } },
      handler: async ({ query, sender }) => {
        const page = await catalog.listSuppressions(sender.tenant.id, query);
        return { status: 200, body: { data: page.data.map(view), next_cursor: page.next_cursor } };
      },
    }),
    route({
      method: 'POST',
      url: '/v1/suppressions',
      tag: 'Suppressions',
      summary: 'Suppress an address',
      access: 'manage',
      body: SuppressionCreate,
      responses: {
        201: { description: 'The suppression in force (an existing one keeps its first reason).', schema: SuppressionView },
        400: { description: 'Not a valid address.', schema: ErrorBody },
      },
      handler: async ({ body, sender }) => {
        const s = await recipients.suppress(sender.tenant.id, address(body.address), {
          reason: body.reason,
          detail: body.detail,
        });
        return { status: 201, body: view(s) };
      },
    }),
    route({
      method: 'GET',
      url: '/v1/suppressions/:address',
      tag: 'Suppressions',
      summary: 'Is this address suppressed?',
      access: 'manage',
      params: AddressParam,
      responses: {
        200: { description: 'The suppression in force.', schema: SuppressionView },
        404: { description: 'The address is not suppressed.', schema: ErrorBody },
      },
      handler: async ({ params, sender }) => {
        const s = await recipients.check(sender.tenant.id, address(params.address));
        if (!s) throw new GatepostError('not_found', `${params.address} is not suppressed.`);
        return { status: 200, body: view(s) };
      },
    }),
    route({
      method: 'DELETE',
      url: '/v1/suppressions/:address',
      tag: 'Suppressions',
      summary: 'Remove an address from the suppression list',
      access: 'manage',
      params: AddressParam,
      responses: { 204: { description: 'Removed.' }, 404: { description: 'The address was not suppressed.', schema: ErrorBody } },
      handler: async ({ params, sender }) => {
        if (!(await recipients.unsuppress(sender.tenant.id, address(params.address)))) {
          throw new GatepostError('not_found', `${params.address} is not suppressed.`);
        }
        return { status: 204 };
      },
    }),
  ];
}
