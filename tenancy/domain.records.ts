// The DNS records a sending domain needs (DESIGN.md "Sending domains"), and what a look-up of each
// found. Required for verification: both DKIM keys and SPF, without which receivers would fail
// Gatepost's mail. Advisory: DMARC (any valid policy passes; p=none is the recommended start) and
// the return-path MX, which lets bounces find their way back, and the inbound MX, which makes the
// domain one that inbound routes may receive mail for (docs/domains.md, docs/inbound.md), and the
// tracking host's CNAME, which lets its messages' links use that host (docs/tracking.md).
import type { Resolver } from 'node:dns/promises';
import type { DomainStatus, RecordCheck, SendingDomain } from '../store/catalog.port.ts';

export type RecordPurpose = 'dkim' | 'spf' | 'dmarc' | 'return_path' | 'inbound_mx' | 'tracking';
export type RecordType = 'TXT' | 'MX' | 'CNAME';

export interface DnsRecord {
  purpose: RecordPurpose;
  type: RecordType;
  name: string;
  /** What to publish: the TXT text, or the MX or CNAME target host. */
  value: string;
  /** MX only. */
  priority?: number;
  /** Needed for the domain to be verified; false: advised. */
  required: boolean;
  /** pending: never looked up; verified: found as it should be; failed: looked up and not found so. */
  status: 'pending' | 'verified' | 'failed';
  /** What the last look-up found there; null before the first. */
  found: string[] | null;
  error: string | null;
}

export interface RecordSettings {
  /** GATEPOST_HOSTNAME: the return-path MX, and the SPF `a:` when nothing else is set. */
  hostname: string;
  /** GATEPOST_SPF_INCLUDE and GATEPOST_SENDING_IPS: what the SPF record must authorise. */
  spf: { include: string | null; ips: string[] };
  /** Where a tracking host's CNAME points: GATEPOST_PUBLIC_URL's host name (GATEPOST_HOSTNAME without it). */
  trackingTarget: string;
}

/** The name the return path (VERP bounces) lives on: bounces.<domain> (mta/verp.ts builds the addresses). */
export const returnPathDomain = (name: string) => `bounces.${name}`;

export const RETURN_PATH_PRIORITY = 10;

/** A host name as DNS answers are compared: lower case, no trailing dot. */
const bareHost = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** The SPF mechanisms Gatepost's mail needs: the operator's include, else its addresses, else its host name. */
function spfMechanisms({ hostname, spf }: RecordSettings): string[] {
  if (spf.include) return [`include:${spf.include}`];
  if (spf.ips.length > 0) return spf.ips.map((ip) => (ip.includes(':') ? `ip6:${ip}` : `ip4:${ip}`));
  return [`a:${hostname}`];
}

interface Expected {
  purpose: RecordPurpose;
  type: RecordType;
  name: string;
  value: string;
  required: boolean;
  /** Whether what was found there is what this record asks for. */
  matches(found: string[]): boolean;
}

function expected(d: SendingDomain, settings: RecordSettings): Expected[] {
  const dkim = (k: 'rsa' | 'ed25519'): Expected => {
    const key = d.dkim[k];
    return {
      purpose: 'dkim',
      type: 'TXT',
      name: `${key.selector}._domainkey.${d.name}`,
      value: `v=DKIM1; k=${k}; p=${key.public_key}`,
      required: true,
      matches: (found) =>
        found.some((text) => {
          const tags = dkimTags(text);
          return (tags.v ?? 'DKIM1') === 'DKIM1' && (tags.k ?? 'rsa') === k && tags.p?.replace(/\s+/g, '') === key.public_key;
        }),
    };
  };
  const mechanisms = spfMechanisms(settings);
  const hostname = bareHost(settings.hostname);
  return [
    dkim('rsa'),
    dkim('ed25519'),
    {
      purpose: 'spf',
      type: 'TXT',
      name: d.name,
      value: `v=spf1 ${mechanisms.join(' ')} ~all`,
      required: true,
      matches: (found) => {
        // RFC 7208 §4.5: more than one SPF record is a permanent error, whatever they say.
        const spf = found.filter((t) => /^v=spf1(\s|$)/i.test(t));
        if (spf.length !== 1) return false;
        const terms = new Set(
          spf[0]!
            .toLowerCase()
            .split(/\s+/)
            .map((t) => t.replace(/^\+/, '')),
        );
        return mechanisms.every((m) => terms.has(m.toLowerCase()));
      },
    },
    {
      purpose: 'dmarc',
      type: 'TXT',
      name: `_dmarc.${d.name}`,
      value: 'v=DMARC1; p=none; adkim=r; aspf=r',
      required: false,
      matches: (found) => {
        const dmarc = found.filter((t) => /^v=DMARC1\s*(;|$)/i.test(t));
        return dmarc.length === 1 && /^(none|quarantine|reject)$/i.test(dkimTags(dmarc[0]!).p ?? '');
      },
    },
    {
      purpose: 'return_path',
      type: 'MX',
      name: returnPathDomain(d.name),
      value: hostname,
      required: false,
      matches: (found) => found.includes(hostname),
    },
    {
      purpose: 'inbound_mx',
      type: 'MX',
      name: d.name,
      value: hostname,
      required: false,
      matches: (found) => found.includes(hostname),
    },
    ...(d.tracking_host ? [trackingRecord(d.tracking_host, settings)] : []),
  ];
}

/** The tracking host's CNAME to Gatepost: advised, and what lets its links be used (gate/gate.ts). */
function trackingRecord(host: string, settings: RecordSettings): Expected {
  const target = bareHost(settings.trackingTarget);
  return {
    purpose: 'tracking',
    type: 'CNAME',
    name: host,
    value: target,
    required: false,
    matches: (found) => found.includes(target),
  };
}

/** `tag=value; tag=value` (RFC 6376 §3.2, DMARC alike), tag names as written. */
function dkimTags(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) tags[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return tags;
}

const checkKey = (r: { purpose: RecordPurpose; name: string }) => `${r.purpose}:${r.name}`;

/** Every record the domain needs, with what its last verification found. */
export function domainRecords(d: SendingDomain, settings: RecordSettings): DnsRecord[] {
  return expected(d, settings).map(({ matches: _, ...record }) => {
    const check = d.checks[checkKey(record)];
    return {
      ...record,
      ...(record.type === 'MX' ? { priority: RETURN_PATH_PRIORITY } : {}),
      status: check ? (check.matches ? 'verified' : 'failed') : 'pending',
      found: check ? check.found : null,
      error: check ? check.error : null,
    };
  });
}

/** The domain's tracking host once the last verification found its CNAME pointing at Gatepost; null otherwise. */
export function verifiedTrackingHost(d: SendingDomain, settings: RecordSettings): string | null {
  const record = domainRecords(d, settings).find((r) => r.purpose === 'tracking');
  return record?.status === 'verified' ? record.name : null;
}

/** Whether the last verification found the domain's MX pointing at Gatepost: inbound routes need it. */
export function receivesMail(d: SendingDomain, settings: RecordSettings): boolean {
  return domainRecords(d, settings).some((r) => r.purpose === 'inbound_mx' && r.status === 'verified');
}

/** Looks every record up; the domain is verified when every required one matches. */
export async function checkRecords(
  d: SendingDomain,
  settings: RecordSettings,
  resolver: Resolver,
): Promise<{ status: DomainStatus; checks: Record<string, RecordCheck> }> {
  const records = expected(d, settings);
  const results = await Promise.all(
    records.map(async (r): Promise<RecordCheck> => {
      try {
        const found =
          r.type === 'TXT'
            ? // A TXT record of several strings is one text (RFC 7208 §3.3, RFC 6376 §3.6.2.2).
              (await resolver.resolveTxt(r.name)).map((strings) => strings.join(''))
            : r.type === 'MX'
              ? (await resolver.resolveMx(r.name)).map((mx) => bareHost(mx.exchange))
              : (await resolver.resolveCname(r.name)).map(bareHost);
        return { found, matches: r.matches(found), error: null };
      } catch (error) {
        return { found: [], matches: false, error: (error as NodeJS.ErrnoException).code ?? String(error) };
      }
    }),
  );
  const checks = Object.fromEntries(records.map((r, i) => [checkKey(r), results[i]!]));
  const status = records.every((r, i) => !r.required || results[i]!.matches) ? 'verified' : 'pending';
  return { status, checks };
}
