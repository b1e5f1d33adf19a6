// Authentication verdicts of a received message (issue 23 item 2): SPF of the client address,
// HELO and MAIL FROM (RFC 7208), every DKIM signature (RFC 6376), DMARC with its policy and which
// identifier aligned (RFC 7489), and the ARC chain (RFC 8617), all from mailauth's authenticate().
// Look-ups go through the resolver given, so GATEPOST_DNS_SERVERS decides where they are asked.
// First: mailauth's verifiers take their key fetcher from it when they load.
import './dkim.keys.ts';
import { authenticate, type DNSResolver } from 'mailauth';

export type { DNSResolver };

/** A mechanism's outcome as RFC 8601 names it: pass, fail, softfail, neutral, none, temperror, permerror, policy. */
export type AuthResult = string;

export interface Verdicts {
  /** The domain checked is MAIL FROM's, or HELO's for the null sender. */
  spf: { result: AuthResult; domain: string | null };
  /** One entry per DKIM-Signature header, in order; empty when unsigned. `aligned`: its d= domain aligns with From (whatever the result). */
  dkim: { result: AuthResult; domain: string; selector: string | null; aligned: boolean }[];
  /** `policy` is the one applied (the subdomain policy for a subdomain), null when the domain publishes none. */
  dmarc: {
    result: AuthResult;
    domain: string | null;
    policy: string | null;
    alignment: { spf: string | null; dkim: string | null };
  };
  /** `instance`: the highest ARC set, null when there is no chain. */
  arc: { result: AuthResult; instance: number | null };
}

export interface Connection {
  /** The client's address. */
  ip: string;
  /** What it gave in EHLO/HELO. */
  helo: string;
  /** MAIL FROM, `''` for the null reverse-path. */
  mailFrom: string;
  /** Our own name, for mailauth's Received-SPF and Authentication-Results text. */
  mta: string;
}

const resultOf = (status: { result?: string } | undefined): AuthResult => status?.result || 'none';

/** Never throws for what a message holds: a broken signature or a missing record is a verdict, not an error. */
export async function verdictsOf(raw: Buffer, connection: Connection, resolver: DNSResolver): Promise<Verdicts> {
  const answer = await authenticate(raw, {
    ip: connection.ip,
    helo: connection.helo,
    sender: connection.mailFrom,
    mta: connection.mta,
    resolver,
    disableBimi: true,
  });
  const { spf, dkim, dmarc, arc } = answer;
  return {
    spf: spf ? { result: resultOf(spf.status), domain: spf.domain || null } : { result: 'none', domain: null },
    dkim: (dkim?.results ?? [])
      .filter((r) => r.signingDomain)
      .map((r) => ({
        result: resultOf(r.status),
        domain: r.signingDomain,
        selector: r.selector ?? null,
        aligned: Boolean(r.status?.aligned),
      })),
    dmarc: dmarc
      ? {
          result: resultOf(dmarc.status),
          domain: dmarc.domain || null,
          policy: dmarc.policy || null,
          alignment: { spf: dmarc.alignment?.spf?.result || null, dkim: dmarc.alignment?.dkim?.result || null },
        }
      : { result: 'none', domain: null, policy: null, alignment: { spf: null, dkim: null } },
    arc: arc ? { result: resultOf(arc.status), instance: arc.i || null } : { result: 'none', instance: null },
  };
}
