// npm run bench:webhooks [-- --messages 200 --endpoints 50 --rate 5 --paced 10]
// Signed webhook deliveries from Gatepost to one local receiver (a child process that verifies
// every delivery with the SDK's verifyWebhook) behind `--endpoints` endpoints, all subscribed to
// email.sent. Each sandbox send fans out to every endpoint.
//   throughput: `--messages` sends at once (batches of 100); deliveries/s until the last arrives
//   latency:    one send every 1/`--rate` s for `--paced` s; commit (the event's created_at) to
//               its first delivery at each endpoint, p50 and p99
// Three runs: the baseline (this process signing and POSTing the same deliveries straight to the
// receiver, one loop per endpoint: no Gatepost), Gatepost with every endpoint live, and Gatepost
// with one endpoint that accepts connections and never answers (a dead receiver among the rest).
import http from 'node:http';
import { parseArgs } from 'node:util';
import { newId } from '../lib/ids.ts';
import { newSecret, signatureHeaders } from '../webhooks/webhook.signing.ts';
import {
  call,
  cpuSince,
  cpuSnapshot,
  fmt,
  gatepostRevision,
  percentile,
  profileArgs,
  sleep,
  startChild,
  startGatepost,
  table,
  waitForQuiet,
  type Child,
} from './common.ts';

const { values: flags } = parseArgs({
  options: {
    messages: { type: 'string', default: '200' },
    endpoints: { type: 'string', default: '50' },
    rate: { type: 'string', default: '5' },
    paced: { type: 'string', default: '10' },
    /** Write CPU profiles of Gatepost (node --cpu-prof) into this directory. */
    profile: { type: 'string' },
  },
});
const MESSAGES = Number(flags.messages);
const ENDPOINTS = Number(flags.endpoints);
const RATE = Number(flags.rate);
const PACED_S = Number(flags.paced);

interface Stats {
  deliveries: number;
  duplicates: number;
  failures: number;
  first: number;
  last: number;
  delays: number[];
  perPath: Record<string, number>;
}

interface Result {
  name: string;
  live: number;
  /** Verified deliveries per second, all live endpoints together. */
  rate: number;
  p50: number;
  p99: number;
  cpu: ReturnType<typeof cpuSince>;
  duplicates: number;
  failures: number;
  notes: string[];
}

const stats = async (receiver: Child) => (await (await fetch(`${receiver.url}/stats`)).json()) as Stats;
const post = (receiver: Child, path: string, body: unknown = {}) =>
  fetch(`${receiver.url}${path}`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json());

async function until(receiver: Child, deliveries: number, maxMs = 600_000): Promise<Stats> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const s = await stats(receiver);
    if (s.deliveries >= deliveries) return s;
    if (Date.now() > deadline) throw new Error(`only ${s.deliveries} of ${deliveries} deliveries arrived`);
    await sleep(100);
  }
}

/** The baseline: this process signs each delivery as Gatepost does and POSTs it, one keep-alive loop per endpoint. */
async function baseline(receiver: Child): Promise<Result> {
  const paths = Array.from({ length: ENDPOINTS }, (_, i) => `/ep/${i}`);
  const secrets = Object.fromEntries(paths.map((p) => [p, newSecret()]));
  await post(receiver, '/secrets', secrets);
  const agent = new http.Agent({ keepAlive: true, maxSockets: ENDPOINTS });
  const target = new URL(receiver.url);
  const deliver = (path: string) =>
    new Promise<void>((resolve, reject) => {
      const event = {
        id: newId('evt'),
        type: 'email.sent',
        created_at: new Date().toISOString(),
        data: {
          message_id: newId('msg'),
          to: 'user@example.com',
          attempt: 1,
          smtp_code: null,
          response: 'Captured.',
          sandbox: true,
        },
      };
      const body = JSON.stringify(event);
      const headers = signatureHeaders({
        eventId: event.id,
        eventType: event.type,
        body,
        secrets: [secrets[path]!],
        timestamp: Math.floor(Date.now() / 1000),
      });
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path,
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  await Promise.all(paths.map((p) => deliver(p))); // warm: one connection per endpoint
  await post(receiver, '/reset');
  const cpu = cpuSnapshot([receiver.pid]);
  const started = Date.now();
  await Promise.all(
    paths.map(async (p) => {
      for (let i = 0; i < MESSAGES; i++) await deliver(p);
    }),
  );
  const s = await stats(receiver);
  const used = cpuSince(cpu);
  const rate = s.deliveries / ((s.last - started) / 1000);

  await post(receiver, '/reset');
  for (let i = 0; i < PACED_S * RATE; i++) {
    void Promise.all(paths.map((p) => deliver(p)));
    await sleep(1000 / RATE);
  }
  const paced = await until(receiver, PACED_S * RATE * ENDPOINTS);
  agent.destroy();
  return {
    name: 'baseline: plain signing loop → receiver',
    live: ENDPOINTS,
    rate,
    p50: percentile(paced.delays, 50),
    p99: percentile(paced.delays, 99),
    cpu: used,
    duplicates: s.duplicates,
    failures: s.failures,
    notes: [],
  };
}

async function gatepost(receiver: Child, dead: boolean): Promise<Result> {
  const profile = profileArgs(flags.profile);
  const gp = await startGatepost(profile, { GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8' });
  try {
    const live = dead ? ENDPOINTS - 1 : ENDPOINTS;
    const secrets: Record<string, string> = {};
    for (let i = 0; i < ENDPOINTS; i++) {
      const path = dead && i === ENDPOINTS - 1 ? '/dead' : `/ep/${i}`;
      const w = await call(gp.url, 'POST', '/v1/webhooks', gp.key, { url: `${receiver.url}${path}`, events: ['email.sent'] });
      if (w.status !== 201) throw new Error(`creating an endpoint: ${w.status} ${JSON.stringify(w.body)}`);
      secrets[path] = w.body.secret;
    }
    await post(receiver, '/secrets', secrets);
    const send = (n: number) =>
      call(
        gp.url,
        'POST',
        '/v1/emails/batch',
        gp.key,
        Array.from({ length: n }, (_, i) => ({
          to: `user${i}@example.com`,
          subject: 'Webhooks',
          html: '<p>w</p>',
        })),
      );

    await post(receiver, '/reset');
    await send(5);
    await until(receiver, 5 * live);

    await post(receiver, '/reset');
    const cpu = cpuSnapshot([gp.pid, receiver.pid]);
    const started = Date.now();
    for (let sent = 0; sent < MESSAGES; sent += 100) {
      const res = await send(Math.min(100, MESSAGES - sent));
      if (res.status !== 200 || res.body.refused > 0)
        throw new Error(`batch: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    const s = await until(receiver, MESSAGES * live);
    const used = cpuSince(cpu);
    const rate = s.deliveries / ((s.last - started) / 1000);
    const perPath = Object.values(s.perPath);

    await post(receiver, '/reset');
    for (let i = 0; i < PACED_S * RATE; i++) {
      const res = await call(gp.url, 'POST', '/v1/emails', gp.key, {
        to: `paced${i}@example.com`,
        subject: 'p',
        html: '<p>p</p>',
      });
      if (res.status !== 202) throw new Error(`send: ${res.status}`);
      await sleep(1000 / RATE);
    }
    const paced = await until(receiver, PACED_S * RATE * live);
    return {
      name: dead ? `Gatepost, ${live} live + 1 dead endpoint` : `Gatepost, ${live} live endpoints`,
      live,
      rate,
      p50: percentile(paced.delays, 50),
      p99: percentile(paced.delays, 99),
      cpu: used,
      duplicates: s.duplicates,
      failures: s.failures,
      notes: [`slowest live endpoint got ${Math.min(...perPath)} and the fastest ${Math.max(...perPath)} of ${MESSAGES}`],
    };
  } finally {
    await gp.stop();
  }
}

const busy = await waitForQuiet();
console.log(
  `bench:webhooks at ${gatepostRevision()}: ${ENDPOINTS} endpoints, ${MESSAGES} sends at once, then ${RATE}/s for ${PACED_S} s ` +
    `(machine ${fmt(busy)}% busy before)`,
);
const receiver = await startChild('receiver', ['bench/servers/webhook-receiver.server.ts']);
const results: Result[] = [];
try {
  results.push(await baseline(receiver));
  await waitForQuiet();
  results.push(await gatepost(receiver, false));
  await waitForQuiet();
  results.push(await gatepost(receiver, true));
} finally {
  await receiver.stop();
}

console.log(
  '\n' +
    table(
      [
        'run',
        'deliveries/s',
        'per live endpoint/s',
        'commit→delivery p50 ms',
        'p99 ms',
        'CPU: servers',
        'bench',
        'other',
        'dup',
        'bad sig',
      ],
      results.map((r) => [
        r.name,
        fmt(r.rate),
        fmt(r.rate / r.live, 1),
        fmt(r.p50),
        fmt(r.p99),
        `${fmt(r.cpu.server)}%`,
        `${fmt(r.cpu.loadgen)}%`,
        `${fmt(r.cpu.other)}%`,
        String(r.duplicates),
        String(r.failures),
      ]),
    ),
);
const [base, all, withDead] = results as [Result, Result, Result];
console.log(`\nGatepost / baseline: ${(all.rate / base.rate).toFixed(2)} (deliveries/s)`);
console.log(
  `with a dead endpoint / without, per live endpoint: ${(withDead.rate / withDead.live / (all.rate / all.live)).toFixed(2)}`,
);
for (const r of results) for (const n of r.notes) console.log(`${r.name}: ${n}`);
