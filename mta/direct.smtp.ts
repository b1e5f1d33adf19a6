// Direct delivery (no relay): the recipient domain's MX hosts in preference order, each of their
// addresses in turn until one takes a connection (RFC 5321 §5.1), then one SMTP transaction on a
// pooled connection to that host. Every end (accepted, refused, deferred) is a DeliveryReport.
import type { Resolver } from 'node:dns/promises';
import { domainOf } from '../mail/address.ts';
import {
  acceptance,
  byDomain,
  parseReply,
  refusedRecipients,
  stageOf,
  unanswered,
  type DeliveryReport,
  type Envelope,
  type Transport,
} from './transport.ts';
import { CachingMxResolver } from './mx.resolve.ts';
import { providerOfDomain } from './provider.ts';
import { connect, DestinationPool, POOL_IDLE_MS, type MxConnection, type MxTimeouts } from './mx.pool.ts';

export interface DirectOptions {
  resolver: Resolver;
  /** GATEPOST_MX_PORT: 25, or a loopback port in tests. */
  port: number;
  /** GATEPOST_HOSTNAME, given in EHLO. */
  hostname: string;
  /** Connections open at once to one MX host (GATEPOST_MX_MAX_CONNECTIONS). */
  maxConnections: number;
  timeouts: MxTimeouts;
  /** How long an MX host's pool may stand idle before it is closed and dropped; POOL_IDLE_MS (a minute) unless set. */
  poolIdleMs?: number;
}

/** Direct delivery, and which MX hosts it holds a pool of connections to now. */
export interface DirectTransport extends Transport {
  pooledHosts(): string[];
}

interface SmtpFailure {
  code?: string;
  /** The command that failed ('MAIL FROM', 'RCPT TO', 'DATA', 'CONN', …). */
  command?: string;
  responseCode?: number;
  response?: string;
  message: string;
  /** Every recipient refused at RCPT TO: each one's refusal. */
  rejectedErrors?: unknown[];
}

/** Errors of a transaction the server answered (MAIL, RCPT, DATA): its 5xx is a refusal for good. */
const ANSWERED = new Set(['EENVELOPE', 'EMESSAGE']);

export function directTransport(opts: DirectOptions): DirectTransport {
  const dns = new CachingMxResolver(opts.resolver);
  // A pool per MX host and source address (GATEPOST_SOURCE_IPS): a connection from one address is
  // never handed to mail that is to go from another, and each address has the cap of its own.
  const pools = new Map<string, { host: string; pool: DestinationPool }>();
  const poolOf = (host: string, source: string | undefined) => {
    const key = `${host} ${source ?? ''}`;
    const found = pools.get(key);
    if (found) return found.pool;
    // An idle pool closes its connections and is dropped; the next message to the host opens a new one.
    const created = new DestinationPool(opts.maxConnections, {
      idleMs: opts.poolIdleMs ?? POOL_IDLE_MS,
      onIdle: () => pools.get(key)?.pool === created && pools.delete(key),
    });
    pools.set(key, { host, pool: created });
    return created;
  };

  /** A connection to `host` from its pool: an idle one, or a new one to the first address that takes it. */
  async function connectTo(host: string, ips: string[], source: string | undefined): Promise<MxConnection> {
    return poolOf(host, source).acquire(async () => {
      let last: unknown;
      for (const ip of ips) {
        try {
          return await connect(host, ip, { ...opts, localAddress: source });
        } catch (error) {
          last = error;
        }
      }
      throw last;
    });
  }

  return {
    transactions: byDomain,
    // The recipients are on one domain (transactions).
    send: (envelope) => deliverTo(domainOf(envelope.to[0]!), envelope),

    async close() {
      for (const { pool } of pools.values()) pool.close();
    },

    pooledHosts: () => [...new Set([...pools.values()].map((p) => p.host))],
    providerOf: providerOfDomain(dns),
  };

  async function deliverTo(domain: string, envelope: Envelope): Promise<DeliveryReport> {
    const route = await dns.route(domain);
    if ('failure' in route) return unanswered(route.failure, route.text);

    const failures: string[] = [];
    for (const mx of route.hosts) {
      const ips = await dns.addressesOf(mx.name);
      if (ips.length === 0) {
        failures.push(`${mx.name}: no address`);
        continue;
      }
      let conn: MxConnection;
      try {
        conn = await connectTo(mx.name, ips, envelope.source);
      } catch (error) {
        failures.push(`${mx.name}: ${describe(error as SmtpFailure)}`);
        continue; // RFC 5321 §5.1: a host that cannot be reached, the next one
      }
      return transact(conn, envelope, poolOf(mx.name, envelope.source));
    }
    // A domain with no MX whose own name has no address cannot take mail (RFC 5321 §5.1). MX
    // hosts that were named but have no address, or could not be reached, may be back later.
    const nowhere = route.implicit && failures.every((f) => f.endsWith('no address'));
    return unanswered(
      nowhere ? 'permanent' : 'transient',
      nowhere ? `Domain ${domain} has no MX and no address` : `No MX host of ${domain} took the message: ${failures.join('; ')}`,
    );
  }
}

/** One transaction on a connection; it goes back to the pool only after a clean acceptance. */
function transact(conn: MxConnection, envelope: Envelope, pool: DestinationPool): Promise<DeliveryReport> {
  const base = { mx: conn.host, ip: conn.ip, tls: conn.tls, connected_at: conn.connected_at };
  return new Promise((resolve) => {
    conn.smtp.send({ from: envelope.from, to: envelope.to }, envelope.raw, (error, info) => {
      if (!error) {
        pool.release(conn, true);
        return resolve({ ...base, ...acceptance(info) });
      }
      pool.release(conn, false);
      const e = error as SmtpFailure;
      const reply = e.response ? parseReply(e.response) : { code: null, enhanced: null, text: describe(e) };
      // A 5xx the server gave to this transaction refuses it for good; anything else (4xx, a
      // timeout, a dropped connection, an answer that is not SMTP) may go better later.
      const permanent = ANSWERED.has(e.code ?? '') && (e.responseCode ?? 0) >= 500;
      // Recipients refused at RCPT TO keep their own answers (one 451, another 550), whether every
      // one was refused or the transaction failed later, at DATA, for those taken.
      const refused = refusedRecipients(e.rejectedErrors ? e : { rejectedErrors: refusalsSoFar(conn.smtp) });
      resolve({
        ...base,
        result: permanent ? 'permanent' : 'transient',
        reply,
        stage: stageOf(e.command),
        accepted_at: null,
        ...(refused.length > 0 ? { refused } : {}),
      });
    });
  });
}

/**
 * The RCPT TO refusals of the connection's current transaction. nodemailer puts them on the error
 * only when every recipient was refused; a failure after DATA leaves them on its envelope alone
 * (`_envelope`, which its types do not declare).
 */
function refusalsSoFar(smtp: MxConnection['smtp']): unknown[] {
  return (smtp as unknown as { _envelope?: { rejectedErrors?: unknown[] } })._envelope?.rejectedErrors ?? [];
}

function describe(error: SmtpFailure): string {
  return error.response ? `${error.message} (${error.response})` : `${error.code ?? 'error'}: ${error.message}`;
}
