// Inbound routes and messages as both catalogs store them: one refusal, one patch rule.
import { GatepostError } from '../errors/errors.catalog.ts';
import type { InboundRoute, InboundRouteCreate, InboundRoutePatch } from './catalog.port.ts';

export const ROUTE_COLUMNS = 'id, tenant_id, match, domain, action, endpoint_id, created_at, updated_at';
/** Everything of a message but its raw bytes. */
export const INBOUND_MESSAGE_COLUMNS = 'id, tenant_id, route_id, mail_from, rcpt_to, remote_address, received_at, payload, size';

export const routeExists = (match: string) =>
  new GatepostError('inbound_route_exists', `This tenant already has an inbound route matching "${match}".`);

export const newRoute = (r: InboundRouteCreate, at: string): InboundRoute => ({ ...r, created_at: at, updated_at: at });

export function patchedRoute(r: InboundRoute, patch: InboundRoutePatch, at: string): InboundRoute {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  return { ...r, ...defined, updated_at: at };
}
