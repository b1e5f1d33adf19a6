// Where a domain's mail goes (RFC 5321 §5.1): its MX hosts in preference order, or the domain
// itself when it publishes no MX. A null MX (RFC 7505) and a domain that does not exist are
// permanent failures; a DNS server that cannot answer is a transient one.
import type { Resolver } from 'node:dns/promises';

export interface MxHost {
  name: string;
  preference: number;
}

/** `implicit`: the domain has no MX and is its own host (an address-less one is then a permanent failure). */
export type MxRoute = { hosts: MxHost[]; implicit: boolean } | { failure: 'permanent' | 'transient'; text: string };

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The DNS answer "no such domain" (NXDOMAIN) and "no records of that type" (NOERROR, no data). */
const NXDOMAIN = 'ENOTFOUND';
const NODATA = 'ENODATA';

export async function resolveMx(domain: string, resolver: Resolver): Promise<MxRoute> {
  let records: { exchange: string; priority: number }[];
  try {
    records = await resolver.resolveMx(domain);
  } catch (error) {
    if (codeOf(error) === NXDOMAIN) return { failure: 'permanent', text: `Domain ${domain} does not exist (NXDOMAIN)` };
    if (codeOf(error) !== NODATA) {
      return { failure: 'transient', text: `MX look-up for ${domain} failed: ${codeOf(error) ?? String(error)}` };
    }
    records = [];
  }
  // RFC 7505: one MX of "." says the domain accepts no mail (node gives its exchange as '').
  if (records.some((r) => r.exchange === '' || r.exchange === '.')) {
    return { failure: 'permanent', text: `Domain ${domain} accepts no mail (null MX, RFC 7505)` };
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
 * the v4 ones quickly). Empty when it has none, or its look-up failed: the caller skips it.
 */
export async function resolveAddresses(host: string, resolver: Resolver): Promise<string[]> {
  const [v4, v6] = await Promise.all([
    resolver.resolve4(host).catch(() => [] as string[]),
    resolver.resolve6(host).catch(() => [] as string[]),
  ]);
  return [...v4, ...v6];
}
