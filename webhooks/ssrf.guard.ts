// The SSRF guard: which destinations a webhook may reach. Checked when an endpoint is created or
// changed, and again before every delivery attempt: the host is resolved, every address it
// resolves to is checked, and the caller connects to the checked addresses only (see
// webhook.http.ts), so a DNS answer that changes between the check and the connection
// (rebinding) is never used.
//
// IP literals in any form the URL standard accepts (decimal 2130706433, octal 0177.0.0.1, hex
// 0x7f.1, short 127.1) are canonicalised by the WHATWG URL parser before they get here; IPv6
// forms that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d,
// NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by the address they embed.
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { BlockList, isIP } from 'node:net';
import { lookup as systemLookup, type Resolver } from 'node:dns/promises';
import { dnsResolver } from '../lib/dns.ts';
import { networkInterfaces } from 'node:os';
import { GatepostError } from '../errors/errors.catalog.ts';

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export interface Destination {
  url: URL;
  /** The host as the URL names it (brackets removed): the Host header and the TLS server name. */
  host: string;
  /** Every address the host resolved to, each checked; connect to these and nothing else. */
  addresses: CheckedAddress[];
}

interface Range {
  net: string;
  prefix: number;
  why: string;
}

// Special-purpose IPv4 ranges (IANA IPv4 Special-Purpose Address Registry, RFC 6890 and successors).
const V4_RANGES: Range[] = [
  { net: '0.0.0.0', prefix: 8, why: 'unspecified ("this network", RFC 791)' },
  { net: '10.0.0.0', prefix: 8, why: 'private (RFC 1918)' },
  { net: '100.64.0.0', prefix: 10, why: 'carrier-grade NAT (RFC 6598)' },
  { net: '127.0.0.0', prefix: 8, why: 'loopback' },
  { net: '169.254.0.0', prefix: 16, why: 'link-local (RFC 3927)' },
  { net: '172.16.0.0', prefix: 12, why: 'private (RFC 1918)' },
  { net: '192.0.0.0', prefix: 24, why: 'IETF protocol assignments (RFC 6890)' },
  { net: '192.0.2.0', prefix: 24, why: 'documentation (RFC 5737)' },
  { net: '192.88.99.0', prefix: 24, why: '6to4 relay anycast (RFC 7526)' },
  { net: '192.168.0.0', prefix: 16, why: 'private (RFC 1918)' },
  { net: '198.18.0.0', prefix: 15, why: 'benchmarking (RFC 2544)' },
  { net: '198.51.100.0', prefix: 24, why: 'documentation (RFC 5737)' },
  { net: '203.0.113.0', prefix: 24, why: 'documentation (RFC 5737)' },
  { net: '224.0.0.0', prefix: 4, why: 'multicast' },
  { net: '240.0.0.0', prefix: 4, why: 'reserved (RFC 1112), broadcast included' },
];

// Special-purpose IPv6 ranges (IANA IPv6 Special-Purpose Address Registry). Those outside global
// unicast 2000::/3 are named for a better reason; the rest of the space outside it is refused too
// (see GLOBAL_UNICAST). The forms that embed an IPv4 address are judged before these.
const V6_RANGES: Range[] = [
  { net: '::', prefix: 128, why: 'unspecified' },
  { net: '::1', prefix: 128, why: 'loopback' },
  { net: '64:ff9b:1::', prefix: 48, why: 'local-use NAT64 (RFC 8215)' },
  { net: 'fc00::', prefix: 7, why: 'unique local (private, RFC 4193)' },
  { net: 'fe80::', prefix: 10, why: 'link-local' },
  { net: 'fec0::', prefix: 10, why: 'site-local (deprecated, RFC 3879)' },
  { net: 'ff00::', prefix: 8, why: 'multicast' },
  { net: '2001::', prefix: 23, why: 'IETF protocol assignments, Teredo included (RFC 2928, RFC 4380)' },
  { net: '2001:db8::', prefix: 32, why: 'documentation (RFC 3849)' },
  { net: '3fff::', prefix: 20, why: 'documentation (RFC 9637)' },
];

/** Cloud instance metadata services: refused even inside GATEPOST_WEBHOOK_ALLOW. */
export const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean…
  '169.254.170.2', // AWS ECS task metadata
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud (legacy)
  'fd00:ec2::254', // AWS IPv6
]);

interface CompiledRange extends Range {
  list: BlockList;
}

function compile(ranges: Range[], family: 'ipv4' | 'ipv6'): CompiledRange[] {
  return ranges.map((r) => {
    const list = new BlockList();
    list.addSubnet(r.net, r.prefix, family);
    return { ...r, list };
  });
}

const V4 = compile(V4_RANGES, 'ipv4');
const V6 = compile(V6_RANGES, 'ipv6');
/** Global unicast, 2000::/3: everything else is unassigned or special (discard-only 100::/64…). */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

const v4At = (b: Uint8Array, i: number) => `${b[i]}.${b[i + 1]}.${b[i + 2]}.${b[i + 3]}`;

/**
 * The IPv4 address an IPv6 address stands for, when it embeds one: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d, RFC 6052) and 6to4 (2002:AABB:CCDD::,
 * RFC 3056): a translator or relay would carry the connection to that IPv4 address.
 */
export function embeddedIPv4(ip: string): { v4: string; form: string } | null {
  if (isIP(ip) !== 6 || ip.includes('%')) return null;
  // ipaddr.js reads the shorthand ::a.b.c.d as IPv4-mapped (::ffff:a.b.c.d); it is IPv4-compatible
  // (RFC 4291 §2.5.5.1), but for :: and ::1, which are IPv6 addresses of their own.
  const shorthand = /^::(\d+\.\d+\.\d+\.\d+)$/.exec(ip)?.[1];
  if (shorthand) return shorthand === '0.0.0.0' || shorthand === '0.0.0.1' ? null : { v4: shorthand, form: 'IPv4-compatible' };
  const b = Uint8Array.from(ipaddr.IPv6.parse(ip).toByteArray());
  const zeros = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return { v4: v4At(b, 12), form: 'IPv4-mapped' };
  // ::a.b.c.d, but not :: and ::1 (unspecified and loopback are IPv6 addresses of their own).
  if (zeros(0, 12) && !(zeros(12, 15) && b[15]! <= 1)) return { v4: v4At(b, 12), form: 'IPv4-compatible' };
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return { v4: v4At(b, 12), form: 'NAT64' };
  if (b[0] === 0x20 && b[1] === 0x02) return { v4: v4At(b, 2), form: '6to4' };
  return null;
}

/**
 * Why `ip` is not a public unicast address, or null when it is. IPv6 addresses that embed an
 * IPv4 address are judged by the IPv4 address they embed.
 */
export function nonPublicReason(ip: string): string | null {
  // Judged once per address (a few per endpoint): every attempt asks again. lru-cache keeps no
  // null, so a public address is kept as ''.
  let why = judged.get(ip);
  if (why === undefined) {
    why = judge(ip) ?? '';
    judged.set(ip, why);
  }
  return why || null;
}

const judged = new LRUCache<string, string>({ max: 4096 });

function judge(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) return V4.find((r) => r.list.check(ip, 'ipv4'))?.why ?? null;
  if (family !== 6) return 'not an IP address';
  if (ip.includes('%')) return 'an IPv6 address with a zone (link-local)';
  const inner = embeddedIPv4(ip);
  if (inner) {
    if (inner.form === 'IPv4-compatible') return `the IPv4-compatible form of ${inner.v4} (deprecated, RFC 4291)`;
    const why = nonPublicReason(inner.v4);
    return why ? `the ${inner.form} form of ${inner.v4}, which is ${why}` : null;
  }
  const special = V6.find((r) => r.list.check(ip, 'ipv6'))?.why;
  if (special) return special;
  return GLOBAL_UNICAST.check(ip, 'ipv6') ? null : 'reserved (outside global unicast 2000::/3)';
}

/** Parses `a.b.c.d/n`, `a::b/n` or a bare address (a /32 or /128) into a BlockList. */
export function cidrList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const raw of cidrs) {
    const text = raw.trim();
    if (!text) continue;
    const [net, bits] = text.split('/') as [string, string | undefined];
    const family = isIP(net);
    if (!family) throw new Error(`GATEPOST_WEBHOOK_ALLOW: "${text}" is not an IP network (like 127.0.0.0/8 or ::1/128)`);
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : Number(bits);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) {
      throw new Error(`GATEPOST_WEBHOOK_ALLOW: "${text}" has a bad prefix length`);
    }
    list.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

export interface GuardOptions {
  /** Networks let through despite being non-public (GATEPOST_WEBHOOK_ALLOW); plain http is allowed to them. */
  allow?: string[];
  /** DNS servers (`ip` or `ip:port`) to resolve with instead of the system resolver (GATEPOST_DNS_SERVERS). */
  dnsServers?: string[] | null;
  /** DNS timeout per query, ms. */
  dnsTimeoutMs?: number;
}

const HTTPS_ONLY = 'the scheme must be https (plain http only reaches networks in GATEPOST_WEBHOOK_ALLOW)';

const refused = (url: string, why: string) =>
  new GatepostError('webhook_url_refused', `The webhook URL ${url} is refused: ${why}.`, {
    details: [{ field: 'url', message: why }],
  });

export class SsrfGuard {
  private readonly allow: BlockList;
  private readonly allowsAny: boolean;
  private readonly resolver: Resolver | null;
  /** Ports Gatepost itself serves on (its API, a Dapr sidecar): never reachable on this machine's addresses. */
  private readonly ownPorts = new Set<number>();
  private localAddresses: { at: number; set: Set<string> } = { at: 0, set: new Set() };

  constructor(opts: GuardOptions = {}) {
    this.allow = cidrList(opts.allow ?? []);
    this.allowsAny = (opts.allow ?? []).some((c) => c.trim() !== '');
    // No servers given: the system's getaddrinfo, which also reads /etc/hosts.
    this.resolver = opts.dnsServers?.length ? dnsResolver(opts.dnsServers, opts.dnsTimeoutMs) : null;
  }

  /** Marks ports of Gatepost's own (its HTTP API, its Dapr sidecar and app ports). */
  protectPorts(...ports: number[]): void {
    for (const p of ports) if (p > 0) this.ownPorts.add(p);
  }

  private allowed(ip: string): boolean {
    if (!this.allowsAny) return false;
    const family = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
    return this.allow.check(ip, family);
  }

  /** This machine's own addresses (refreshed each minute): its public ones must not be reachable either. */
  private isLocal(ip: string): boolean {
    if (Date.now() - this.localAddresses.at > 60_000) {
      const set = new Set<string>();
      for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) set.add(a.address.split('%')[0]!);
      this.localAddresses = { at: Date.now(), set };
    }
    return this.localAddresses.set.has(ip);
  }

  /** Why the guard refuses `ip` on `port` ("private (RFC 1918)"), or null when it may be reached. */
  reasonToRefuse(ip: string, port: number): string | null {
    const target = embeddedIPv4(ip)?.v4 ?? ip;
    if (METADATA_ADDRESSES.has(target)) return 'a cloud metadata address';
    const nonPublic = nonPublicReason(ip);
    if (this.ownPorts.has(port)) {
      const here = nonPublicReason(target) === 'loopback' || /^(0\.|::$)/.test(target) || this.isLocal(target);
      if (here) return `Gatepost's own service (port ${port} of this machine)`;
    }
    if (this.allowed(ip)) return null;
    if (nonPublic) return nonPublic;
    if (this.isLocal(target)) return 'an address of this machine';
    return null;
  }

  /**
   * Checks the URL (https, or http to allowed networks only; no other scheme), resolves its host
   * and checks every address. Throws `webhook_url_refused` saying why.
   */
  async check(raw: string): Promise<Destination> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refused(raw, 'it is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw refused(raw, `the scheme must be https, not ${url.protocol}`);
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (!host) throw refused(raw, 'it has no host');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    // The address is the more telling reason, so it is checked first; but plain http with
    // nothing allowed is refused whatever the name resolves to, or fails to.
    const addresses = isIP(host)
      ? [{ address: host, family: isIP(host) as 4 | 6 }]
      : await this.resolve(raw, host).catch((error: unknown) => {
          throw url.protocol === 'http:' && !this.allowsAny ? refused(raw, HTTPS_ONLY) : error;
        });
    for (const a of addresses) {
      const why = this.reasonToRefuse(a.address, port);
      if (why) throw refused(raw, isIP(host) ? `${a.address} is ${why}` : `${host} resolves to ${a.address}, which is ${why}`);
    }
    if (url.protocol === 'http:' && !addresses.every((a) => this.allowed(a.address))) throw refused(raw, HTTPS_ONLY);
    return { url, host, addresses };
  }

  private async resolve(raw: string, host: string): Promise<CheckedAddress[]> {
    let found: CheckedAddress[];
    try {
      if (this.resolver) {
        const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(host), this.resolver.resolve6(host)]);
        const hard = [v4, v6].find(
          (r): r is PromiseRejectedResult =>
            r.status === 'rejected' && !['ENOTFOUND', 'ENODATA'].includes((r.reason as { code?: string }).code ?? ''),
        );
        if (hard) throw hard.reason;
        found = [
          ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
          ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
        ];
      } else {
        found = (await systemLookup(host, { all: true, verbatim: true })).map((a) => ({
          address: a.address,
          family: a.family as 4 | 6,
        }));
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') throw refused(raw, `${host} does not resolve`);
      throw refused(raw, `${host} could not be resolved (${code ?? (error as Error).message})`);
    }
    if (found.length === 0) throw refused(raw, `${host} does not resolve`);
    return found;
  }
}
