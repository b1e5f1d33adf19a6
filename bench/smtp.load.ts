// The SMTP load of bench:ingress and bench:inbound: persistent connections, each sending one
// message after another until the count is reached, every reply and latency kept; and the table
// both print of what they measured.
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { fmt, percentile, table, type cpuSince } from './common.ts';

export interface SmtpTarget {
  name: string;
  port: number;
  /** STARTTLS with this CA; null: plain. */
  ca: string | null;
  /** AUTH credentials, when the server asks for them. */
  auth: { user: string; pass: string } | null;
  pids: () => number[];
}

/** What one load (a warm-up or the measured part) got back. */
export interface Load {
  accepted: number;
  refused: number;
  /** Errors met, and anything else worth a line under the table. */
  notes: string[];
  /** Per message (SMTP) or per request (HTTP), ms; empty where the load tool keeps none. */
  latencies: number[];
  /** What was accepted, to check afterwards: the servers' 250 replies, or ids read from them. */
  receipts: string[];
}

export const emptyLoad = (): Load => ({ accepted: 0, refused: 0, notes: [], latencies: [], receipts: [] });

/** Message n: its envelope and bytes. */
export type Mail = (n: number) => { from: string; to: string; raw: Buffer };

const promised = <T>(fn: (cb: (error: Error | null, value: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value))));

/** Sends messages first..first+count-1 over `connections` persistent connections, each in turn. */
export async function smtpLoad(target: SmtpTarget, mail: Mail, connections: number, first: number, count: number): Promise<Load> {
  const load = emptyLoad();
  let next = first;
  const end = first + count;
  const client = async () => {
    const c = new SMTPConnection({
      host: '127.0.0.1',
      port: target.port,
      name: 'loadgen.bench.test',
      ...(target.ca ? { requireTLS: true, tls: { ca: target.ca } } : { ignoreTLS: true }),
    });
    c.on('error', (error: Error) => load.notes.push(`error: ${error.message}`));
    await promised<void>((cb) => c.connect(() => cb(null, undefined)));
    if (target.auth) await promised<true>((cb) => c.login(target.auth!, cb as never));
    while (next < end) {
      const n = next++;
      const { from, to, raw } = mail(n);
      const started = performance.now();
      try {
        const info = await promised<{ response: string }>((cb) => c.send({ from, to: [to] }, raw, cb as never));
        load.latencies.push(performance.now() - started);
        load.accepted++;
        load.receipts.push(info.response);
      } catch (error) {
        load.refused++;
        load.notes.push(`error: ${(error as Error).message}`);
      }
    }
    c.quit();
  };
  await Promise.all(Array.from({ length: connections }, client));
  return load;
}

/** One measured load: what bench:ingress and bench:inbound print a table line of. */
export interface Row {
  name: string;
  accepted: number;
  seconds: number;
  refused: number;
  /** Per message (SMTP: MAIL FROM to the 250 after DATA; HTTP: per request), ms, ascending. */
  latencies: number[];
  cpu: ReturnType<typeof cpuSince>;
  notes: string[];
}

export const rateOf = (r: Row) => r.accepted / r.seconds;

/** The table of rows, its first column headed `what`. */
export function rowsTable(what: string, rows: Row[]): string {
  return table(
    [what, 'accepted/s', 'accepted', 'refused', 'p50 ms', 'p99 ms', 'server CPU', 'load gen CPU', 'other CPU'],
    rows.map((r) => [
      r.name,
      fmt(rateOf(r)),
      fmt(r.accepted),
      fmt(r.refused),
      fmt(percentile(r.latencies, 50), 2),
      fmt(percentile(r.latencies, 99), 2),
      `${fmt(r.cpu.server)}%`,
      `${fmt(r.cpu.loadgen)}%`,
      `${fmt(r.cpu.other)}%`,
    ]),
  );
}
