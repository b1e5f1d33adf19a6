// Where a domain's mail goes (RFC 5321 §5.1): its MX hosts in preference order, or the domain
// itself when it publishes no MX. A null MX (RFC 7505) and a domain that does not exist are
// permanent failures; a DNS server that cannot answer is a transient one.
import type { Resolver } from 'node:dns/promises';
import { DNS_CACHE_MS, KeptAnswers, NODATA, NXDOMAIN } from '../lib/dns.ts';

export interface MxHost {
  name: string;
  preference: number;
}

/**
 * `implicit`: the domain has no MX and is its own host (an address-less one is then a permanent failure).
 * `cause` names a permanent failure's kind, for address validation (mail/validate.ts) to tell apart.
 */
export type MxRoute =
  | { hosts: MxHost[]; implicit: boolean }
  | { failure: 'permanent'; cause: 'nxdomain' | 'null_mx'; text: string }
  | { failure: 'transient'; text: string };

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

export async function resolveMx(domain: string, resolver: Resolver): Promise<MxRoute> {
  let records: { exchange: string; priority: number }[];
  try {
    records = await resolver.resolveMx(domain);
  } catch (error) {
    if (codeOf(error) === NXDOMAIN)
      return { failure: 'permanent', cause: 'nxdomain', text: `Domain ${domain} does not exist (NXDOMAIN)` };
    if (codeOf(error) !== NODATA) {
      return { failure: 'transient', text: `MX look-up for ${domain} failed: ${codeOf(error) ?? String(error)}` };
    }
    records = [];
  }
  // RFC 7505: one MX of "." says the domain accepts no mail (node gives its exchange as '').
  if (records.some((r) => r.exchange === '' || r.exchange === '.')) {
    return { failure: 'permanent', cause: 'null_mx', text: `Domain ${domain} accepts no mail (null MX, RFC 7505)` };
  }
  // RFC 5321 §5.1: no MX, the domain itself is the host, as if it had an MX of preference 0.
  if (records.length === 0) return { hosts: [{ name: domain, preference: 0 }], implicit: true };
  // Lowest preference first; RFC 5321 §5.1 asks senders to spread load over hosts of equal preference, so ties are shuffled.
  return {
    implicit: false,
    hosts: records
      .map((r) => ({ name: r.exchange.replace(/\.$/, ''), preference: r.priority, tie: Math.random() }))
      .sort((a, b) => a.preference - b.preference || a.tie - b.tie)
      .map(({ name, preference }) => ({ name, preference })),
  };
}

/**
 * The addresses of one MX host, IPv4 first then IPv6 (a host with no IPv6 route still reaches
 * the v4 ones quickly), and the shortest TTL among them. Empty when it has none, or its look-up
 * failed: the caller skips it.
 */
export async function resolveAddresses(host: string, resolver: Resolver): Promise<{ ips: string[]; ttlS: number }> {
  const [v4, v6] = await Promise.all([
    resolver.resolve4(host, { ttl: true }).catch(() => []),
    resolver.resolve6(host, { ttl: true }).catch(() => []),
  ]);
  const found = [...v4, ...v6];
  return { ips: found.map((r) => r.address), ttlS: Math.min(...found.map((r) => r.ttl)) };
}

/**
 * `resolveMx` and `resolveAddresses` with what they found kept a while, as a caching resolver
 * would keep it: a delivery to a domain asked the DNS server three questions (MX, A, AAAA) for
 * every message. A route is kept DNS_CACHE_MS (Node's resolver does not tell an MX record's TTL),
 * addresses their shortest TTL up to that; failures and empty answers are asked again next time.
 * Concurrent questions about one name share one look-up.
 */
export class CachingMxResolver {
  private readonly routes = new KeptAnswers<MxRoute>();
  private readonly addresses = new KeptAnswers<{ ips: string[]; ttlS: number }>();

  constructor(private readonly resolver: Resolver) {}

  route(domain: string): Promise<MxRoute> {
    const key = domain.toLowerCase();
    return this.routes.get(
      key,
      () => resolveMx(key, this.resolver),
      (route) => ('hosts' in route ? DNS_CACHE_MS : 0),
    );
  }

  addressesOf(host: string): Promise<string[]> {
    const key = host.toLowerCase();
    const found = this.addresses.get(
      key,
      () => resolveAddresses(key, this.resolver),
      ({ ips, ttlS }) => (ips.length > 0 ? ttlS * 1000 : 0),
    );
    return found.then(({ ips }) => ips);
  }
}
