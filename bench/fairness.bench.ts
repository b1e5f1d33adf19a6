// npm run bench:fairness [-- --backlog 100000 --rate 50 --seconds 20 --connections 20]
// The per-tenant fair queue (docs/deliverability.md#the-fair-queue) under a backlog: a quiet
// tenant sends `rate` messages a second for `seconds`, first alone, then beside a noisy tenant
// that has just submitted `backlog` messages as fast as it can (over `connections`). Both send
// through POST /v1/emails with live keys from verified domains of their own, delivered directly to
// one SMTP sink that the loopback DNS names as the recipients' MX (bench/servers/smtp-sink.server.ts,
// as bench:deliver). Reports the quiet tenant's submission-to-arrival p50/p99 alone and beside the
// backlog (goal: p99 beside ≤ 1.5 × alone), how much of the backlog still waited when the quiet
// load ended (it must, for the figure to mean anything), and the total delivery rate of the
// backlog phase (goal: ≥ 0.9 × bench:deliver's delivered/s on the same machine).
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { call, fmt, gatepostRevision, percentile, sleep, startChild, startGatepost, table, waitForQuiet, type Child } from './common.ts';

const { values: flags } = parseArgs({
  options: {
    backlog: { type: 'string', default: '100000' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '20' },
  },
});
const BACKLOG = Number(flags.backlog);
const RATE = Number(flags.rate);
const QUIET = Math.round(RATE * Number(flags.seconds));
const CONNECTIONS = Number(flags.connections);
const SINK_DOMAIN = 'sink.bench.test';
/** The quiet tenant's messages are numbered from here (alone) and twice this (beside the backlog). */
const QUIET_BASE = 10_000_000;
const ARRIVAL_WAIT_MS = 1_800_000;

interface Sink {
  child: Child;
  smtpPort: number;
  stats(): Promise<{ received: number; duplicates: number; arrivals: Record<string, number> }>;
  reset(): Promise<void>;
}

async function startSink(): Promise<Sink> {
  const child = await startChild('SMTP sink', ['bench/servers/smtp-sink.server.ts']);
  const smtpPort = Number(/SMTP sink on \S+:(\d+)/.exec(child.output())![1]);
  return {
    child,
    smtpPort,
    stats: async () => (await fetch(`${child.url}/stats`)).json(),
    reset: async () => void (await fetch(`${child.url}/reset`, { method: 'POST', body: '{}' })),
  };
}

type Send = (n: number) => Promise<void>;

/** A live key of a new tenant with a verified domain of its own, and its send of message n. */
async function sender(gp: { url: string; adminToken: string }, dns: DnsServer, name: string): Promise<Send> {
  const tenant = await call(gp.url, 'POST', '/v1/admin/tenants', gp.adminToken, { name });
  const live = await call(gp.url, 'POST', `/v1/admin/tenants/${tenant.body.id}/keys`, gp.adminToken, { kind: 'live' });
  const key = live.body.key as string;
  const domainName = `${name}.bench.test`;
  const domain = await call(gp.url, 'POST', '/v1/domains', key, { name: domainName });
  for (const r of domain.body.records as { type: string; name: string; value: string }[])
    if (r.type === 'TXT') dns.records.set(r.name, { TXT: [r.value] });
  const verified = await call(gp.url, 'POST', `/v1/domains/${domain.body.id}/verify`, key);
  if (verified.body?.status !== 'verified') throw new Error(`verifying ${domainName}: ${JSON.stringify(verified.body)}`);
  return async (n) => {
    const res = await call(gp.url, 'POST', '/v1/emails', key, {
      from: `Shop <shop@${domainName}>`,
      to: `user${n}@${SINK_DOMAIN}`,
      subject: `Order ${n} has shipped`,
      html: '<p>Your parcel is on its way.</p>',
      headers: { 'X-Bench-N': String(n) },
    });
    if (res.status !== 202) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  };
}

/** Sends `count` messages from `first`, `rate` a second; answers when each was submitted. */
async function paced(send: Send, first: number, count: number, rate: number): Promise<Map<number, number>> {
  const at = new Map<number, number>();
  const start = performance.now();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    const n = first + i;
    at.set(n, Date.now());
    sends.push(send(n));
  }
  await Promise.all(sends);
  return at;
}

/** Sends `count` messages from `first` over `CONNECTIONS` at once, as fast as they are taken; `onProgress` hears each. */
async function burst(send: Send, first: number, count: number, onProgress: (done: number) => void): Promise<void> {
  let next = first;
  let done = 0;
  const worker = async () => {
    while (next < first + count) {
      await send(next++);
      onProgress(++done);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

/** Waits until every number in `wanted` has arrived at the sink; answers the arrivals. */
async function arrivals(sink: Sink, wanted: number): Promise<Map<number, number>> {
  const deadline = Date.now() + ARRIVAL_WAIT_MS;
  let stats = await sink.stats();
  while (stats.received < wanted && Date.now() < deadline) {
    await sleep(500);
    stats = await sink.stats();
  }
  if (stats.duplicates) console.log(`${stats.duplicates} duplicates at the sink`);
  if (stats.received < wanted) console.log(`only ${stats.received} of ${wanted} arrived`);
  return new Map(Object.entries(stats.arrivals).map(([n, t]) => [Number(n), t]));
}

const latencies = (submitted: Map<number, number>, arrived: Map<number, number>) =>
  [...submitted].flatMap(([n, at]) => (arrived.has(n) ? [arrived.get(n)! - at] : [])).sort((a, b) => a - b);

async function main() {
  console.log(
    `bench:fairness on ${cpus().length} cores, Node ${process.version}, Gatepost at ${gatepostRevision()}; ` +
      `a quiet tenant at ${RATE}/s for ${QUIET} messages, alone and beside a backlog of ${BACKLOG} over ${CONNECTIONS} connections\n`,
  );
  const dns = await startDns(
    { [SINK_DOMAIN]: { MX: [{ exchange: `mx.${SINK_DOMAIN}`, priority: 10 }] }, [`mx.${SINK_DOMAIN}`]: { A: ['127.0.0.1'] } },
    { ttl: 300 },
  );
  const sink = await startSink();
  const gp = await startGatepost([], {
    GATEPOST_DNS_SERVERS: dns.address,
    GATEPOST_MX_PORT: String(sink.smtpPort),
    GATEPOST_HOSTNAME: 'gatepost.bench.test',
  });
  try {
    const quiet = await sender(gp, dns, 'quiet');
    const noisy = await sender(gp, dns, 'noisy');
    await waitForQuiet(15, 120_000);

    await sink.reset();
    const alone = await paced(quiet, QUIET_BASE, QUIET, RATE);
    const aloneLatencies = latencies(alone, await arrivals(sink, QUIET));

    // The backlog first (its submission goes on while the quiet tenant sends), then the quiet
    // load once a quarter of the backlog is in.
    await sink.reset();
    const started = Date.now();
    let quarterIn!: () => void;
    const quarter = new Promise<void>((resolve) => (quarterIn = resolve));
    const backlog = burst(noisy, 0, BACKLOG, (done) => done >= BACKLOG / 4 && quarterIn());
    await quarter;
    const beside = await paced(quiet, 2 * QUIET_BASE, QUIET, RATE);
    const queue = await call(gp.url, 'GET', '/v1/admin/queue', gp.adminToken);
    const stillWaiting = (queue.body.data as { waiting: number }[]).reduce((n, r) => n + r.waiting, 0);
    await backlog;
    const arrived = await arrivals(sink, BACKLOG + QUIET);
    const besideLatencies = latencies(beside, arrived);
    const seconds = (Math.max(...arrived.values()) - started) / 1000;

    const p99Alone = percentile(aloneLatencies, 99);
    const p99Beside = percentile(besideLatencies, 99);
    console.log(
      table(
        ['quiet tenant', 'delivered', 'p50 ms', 'p99 ms'],
        [
          ['alone', `${aloneLatencies.length}/${QUIET}`, fmt(percentile(aloneLatencies, 50), 1), fmt(p99Alone, 1)],
          [`beside ${fmt(BACKLOG)}`, `${besideLatencies.length}/${QUIET}`, fmt(percentile(besideLatencies, 50), 1), fmt(p99Beside, 1)],
        ],
      ),
    );
    console.log(
      `\np99 beside / alone: ${fmt(p99Beside / p99Alone, 2)} (goal ≤ 1.5); ` +
        `the backlog still waiting in the queue when the quiet load ended: ${fmt(stillWaiting)}\n` +
        `delivered in the backlog phase: ${fmt(arrived.size)} in ${fmt(seconds, 1)} s, ${fmt(arrived.size / seconds)}/s ` +
        `(goal ≥ 0.9 × bench:deliver's delivered/s on this machine)\n`,
    );
  } finally {
    await gp.stop();
    await sink.child.stop();
    await dns.close();
  }
}

await main();
process.exit(0);
