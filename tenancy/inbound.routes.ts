// Inbound routes (issue 23 item 3): which recipients on a tenant's inbound domain the inbound MX
// accepts mail for, and what becomes of it. An inbound domain is a verified sending domain whose
// `inbound_mx` record (its MX pointing at GATEPOST_HOSTNAME) verification found: the domain's
// ownership is already proven once, by its DKIM records, and one tenant at most holds a name
// verified, so the inbound MX knows whose mail it is without a second resource to prove.
//
// `match` syntax: `user@domain` (that address), `*@domain` (any address on the domain) or a local
// part with `*` wildcards, each standing for any run of characters, none included
// (`support+*@domain`, `*-orders@domain`). Case is ignored. Where several routes match, the one
// with the most characters other than `*` wins (an exact address beats a pattern, a pattern beats
// the catch-all); between equals, the oldest.
import { GatepostError } from '../errors/errors.catalog.ts';
import { newId } from '../lib/ids.ts';
import type { Catalog, InboundAction, InboundRoute } from '../store/catalog.port.ts';
import { receivesMail, type RecordSettings } from './domain.records.ts';
import { domainName } from './domains.ts';

export type RouteView = Omit<InboundRoute, 'tenant_id'>;

export interface RouteFields {
  match: string;
  action?: InboundAction;
  endpoint_id?: string | null;
}

/** What the inbound MX does with one recipient. */
export type RecipientAnswer =
  | { kind: 'route'; route: InboundRoute }
  /** An address on a return-path domain (`bounces.<verified domain>`): the owner's reports. */
  | { kind: 'report'; tenant_id: string }
  /** A domain Gatepost receives mail for, but no route covers the address: 550 5.1.1. */
  | { kind: 'unknown_user' }
  /** A domain Gatepost does not receive mail for: 550 5.7.1, relaying denied. */
  | { kind: 'relay' };

// RFC 5322 atext and dots, and `*` as the wildcard.
const LOCAL = /^[a-z0-9!#$%&'+\-/=?^_`{|}~.*]{1,64}$/;

/** The match as stored (lower case, the domain as IDNA A-labels) and its parts; null when it is not one. */
export function parseMatch(input: string): { match: string; local: string; domain: string } | null {
  const at = input.lastIndexOf('@');
  if (at <= 0) return null;
  const local = input.slice(0, at).toLowerCase();
  const domain = domainName(input.slice(at + 1));
  if (!domain || !LOCAL.test(local) || local.includes('**')) return null;
  return { match: `${local}@${domain}`, local, domain };
}

const patternOf = (local: string) =>
  new RegExp(
    `^${local
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
      .join('.*')}$`,
  );

/** The route of `address` among routes on its domain (oldest first), by the rule above. */
export function routeFor(routes: readonly InboundRoute[], address: string): InboundRoute | null {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at).toLowerCase();
  let best: InboundRoute | null = null;
  let bestWeight = -1;
  for (const route of routes) {
    const pattern = route.match.slice(0, route.match.lastIndexOf('@'));
    const weight = pattern.replaceAll('*', '').length;
    if (weight > bestWeight && patternOf(pattern).test(local)) {
      best = route;
      bestWeight = weight;
    }
  }
  return best;
}

const RETURN_PATH = /^bounces\.(.+)$/;

export class InboundRoutes {
  constructor(
    private readonly catalog: Catalog,
    private readonly settings: RecordSettings,
  ) {}

  view({ tenant_id: _, ...route }: InboundRoute): RouteView {
    return route;
  }

  async create(tenantId: string, fields: RouteFields): Promise<RouteView> {
    const checked = await this.checked(tenantId, fields);
    return this.view(await this.catalog.createInboundRoute({ id: newId('rte'), tenant_id: tenantId, ...checked }));
  }

  async list(tenantId: string): Promise<RouteView[]> {
    return (await this.catalog.listInboundRoutes(tenantId)).map((r) => this.view(r));
  }

  async get(tenantId: string, id: string): Promise<RouteView> {
    return this.view(await this.found(tenantId, id));
  }

  async update(tenantId: string, id: string, patch: Partial<RouteFields>): Promise<RouteView> {
    const current = await this.found(tenantId, id);
    const checked = await this.checked(tenantId, {
      match: patch.match ?? current.match,
      action: patch.action ?? current.action,
      endpoint_id: patch.endpoint_id !== undefined ? patch.endpoint_id : current.endpoint_id,
    });
    const updated = await this.catalog.updateInboundRoute(tenantId, id, checked);
    if (!updated) throw notFound(id);
    return this.view(updated);
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!(await this.catalog.deleteInboundRoute(tenantId, id))) throw notFound(id);
  }

  /** What the inbound MX does with mail for `address` (already a syntactically valid address). */
  async recipient(address: string): Promise<RecipientAnswer> {
    const domain = domainName(address.slice(address.lastIndexOf('@') + 1));
    if (!domain) return { kind: 'relay' };
    const returnPath = RETURN_PATH.exec(domain);
    if (returnPath) {
      const owner = await this.catalog.verifiedDomainByName(returnPath[1]!);
      if (owner) return { kind: 'report', tenant_id: owner.tenant_id };
    }
    const owner = await this.catalog.verifiedDomainByName(domain);
    if (!owner || !receivesMail(owner, this.settings)) return { kind: 'relay' };
    // Routes a tenant made while it held the domain, kept after another took it over, are not its mail.
    const routes = (await this.catalog.inboundRoutesOn(domain)).filter((r) => r.tenant_id === owner.tenant_id);
    const route = routeFor(routes, address);
    return route ? { kind: 'route', route } : { kind: 'unknown_user' };
  }

  private async found(tenantId: string, id: string): Promise<InboundRoute> {
    const route = await this.catalog.getInboundRoute(tenantId, id);
    if (!route) throw notFound(id);
    return route;
  }

  private async checked(tenantId: string, fields: RouteFields) {
    const parsed = parseMatch(fields.match);
    if (!parsed) {
      throw new GatepostError('invalid_request', `"${fields.match}" is not a route match.`, {
        details: [{ field: 'match', message: 'user@domain, *@domain, or a local part with * wildcards (support+*@domain)' }],
      });
    }
    const action = fields.action ?? 'webhook';
    const endpoint_id = fields.endpoint_id ?? null;
    if (endpoint_id !== null) {
      if (action !== 'webhook') {
        throw new GatepostError('invalid_request', 'A route that only stores mail posts to no endpoint.', {
          details: [{ field: 'endpoint_id', message: 'only with action "webhook"' }],
        });
      }
      if (!(await this.catalog.getWebhook(tenantId, endpoint_id))) {
        throw new GatepostError('invalid_request', `No webhook endpoint of this tenant has the id "${endpoint_id}".`, {
          details: [{ field: 'endpoint_id', message: 'no such webhook endpoint' }],
        });
      }
    }
    const domain = await this.catalog.verifiedDomain(tenantId, parsed.domain);
    if (!domain || !receivesMail(domain, this.settings)) {
      throw new GatepostError(
        'inbound_domain_not_verified',
        `${parsed.domain} is not a verified domain of this tenant whose MX record points at Gatepost.`,
        { details: [{ field: 'match', message: 'verify the domain with its inbound_mx record published first' }] },
      );
    }
    return { match: parsed.match, domain: parsed.domain, action, endpoint_id };
  }
}

const notFound = (id: string) => new GatepostError('not_found', `No inbound route has the id "${id}".`);
