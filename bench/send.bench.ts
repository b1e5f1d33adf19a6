// npm run bench:send [-- --duration 10 --connections 64 --warmup 2 --rounds 3 --profile DIR --node-args="ARGS" --runtime embedded|dapr|both --scale-out --load wrk|autocannon --observability]
// POST /v1/emails under the same load against servers, one after the other: Gatepost (sandbox
// key; on the embedded runtime with fsync on, and/or on the Dapr topology of dapr/cluster), a bare
// Fastify route (the HTTP ceiling) and Express + zod + BullMQ, taking turns for several rounds.
// The servers are child processes. The load generator is wrk (Debian's, installed if missing;
// one thread, send.wrk.lua), or autocannon in this process: on two cores a load generator's CPU is
// taken from the server it measures, and autocannon, in JavaScript, takes several times wrk's.
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import {
  call,
  capturedUntil,
  cpuSince,
  cpuSnapshot,
  gatepostRevision,
  inTurns,
  median,
  fmt,
  percentile,
  profileArgs,
  rssMiB,
  sendBody,
  sleep,
  startChild,
  startGatepost,
  startGatepostDapr,
  table,
  waitForQuiet,
  type BenchGatepost,
} from './common.ts';
import { ensureWrk, wrkLoad, type LoadResult } from './wrk.load.ts';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    warmup: { type: 'string', default: '2' },
    /** Write a CPU profile of Gatepost (node --cpu-prof) into this directory; on Dapr, one an app. */
    profile: { type: 'string' },
    /** More Node arguments for Gatepost (each app on Dapr), space-separated (e.g. "--import ./gc-stats.mjs"). */
    'node-args': { type: 'string' },
    /** Diagnostic: schedule every send this many seconds ahead, so Gatepost only admits (no delivery during the run). */
    'send-at': { type: 'string' },
    /** Seconds Gatepost is left idle after each run before its resident memory is read again. */
    idle: { type: 'string', default: '0' },
    /** Diagnostic: measure Gatepost only. */
    'gatepost-only': { type: 'boolean', default: false },
    /** Every server is measured this many times, taking turns (see main). */
    rounds: { type: 'string', default: '3' },
    /**
     * `embedded` (default), `dapr` (the Dapr topology: ingress and actor host beside their daprd,
     * Redis, PostgreSQL), or `both`. The baselines run once a round either way.
     */
    runtime: { type: 'string', default: 'embedded' },
    /**
     * With the Dapr topology: also two actor hosts and two ingresses, measured in every round
     * beside one of each, the load split over both ingresses (a load generator each, with half
     * the connections).
     */
    'scale-out': { type: 'boolean', default: false },
    /** `wrk` (default) or `autocannon`. */
    load: { type: 'string', default: 'wrk' },
    /**
     * What metrics and the request log cost (issue 26, budget 5 %): the embedded Gatepost as it
     * ships (metrics counted, GET /metrics scraped every second, a log line a request) against one
     * with GATEPOST_METRICS=false and GATEPOST_LOG_LEVEL=warn, taking turns; no baselines.
     */
    observability: { type: 'boolean', default: false },
  },
});
const DURATION = Number(flags.duration);
const CONNECTIONS = Number(flags.connections);
const WARMUP = Number(flags.warmup);
const ROUNDS = Number(flags.rounds);
const SEND_AT_S = flags['send-at'] === undefined ? null : Number(flags['send-at']);
const IDLE_S = Number(flags.idle);
const REDIS = { host: '127.0.0.1', port: 6379 };

/** Node's arguments for Gatepost (each app on Dapr): --profile's and --node-args. */
const nodeArgs = () => [...profileArgs(flags.profile), ...(flags['node-args']?.split(' ') ?? [])];

function body(n: number | string): string {
  const send = sendBody(n);
  if (SEND_AT_S !== null) send.send_at = new Date(Date.now() + SEND_AT_S * 1000).toISOString();
  return JSON.stringify(send);
}

/**
 * Sends POST /v1/emails for `seconds` on CONNECTIONS keep-alive connections, split evenly over
 * `urls` (a load generator each, at once). With several, the answers are added up, the run lasts
 * as long as the longest, and the latencies are the worst URL's (percentiles do not add up);
 * `byUrl` has each one's own result.
 */
async function load(
  urls: string[],
  key: string,
  seconds: number,
  counter: { n: number },
): Promise<LoadResult & { byUrl: LoadResult[] }> {
  const connections = Math.max(1, Math.round(CONNECTIONS / urls.length));
  const byUrl = await Promise.all(
    urls.map((url) =>
      flags.load === 'wrk'
        ? wrkLoad({ url, key, seconds, connections, body: body('{N}'), label: `r${counter.n++}` })
        : loadAutocannon(url, key, seconds, counter, connections),
    ),
  );
  const worst = (of: (r: LoadResult) => number) => Math.max(...byUrl.map(of));
  const sum = (of: (r: LoadResult) => number) => byUrl.reduce((n, r) => n + of(r), 0);
  return {
    seconds: worst((r) => r.seconds),
    accepted: sum((r) => r.accepted),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    latency: { p50: worst((r) => r.latency.p50), p99: worst((r) => r.latency.p99), max: worst((r) => r.latency.max) },
    ids: byUrl.flatMap((r) => r.ids),
    byUrl,
  };
}

/** The load from autocannon, in this process; the latencies are of the 202 answers. */
function loadAutocannon(
  url: string,
  key: string,
  seconds: number,
  counter: { n: number },
  connections: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const ids: string[] = [];
  let non2xx = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path: '/v1/emails',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            setupRequest: (request) => ({ ...request, body: body(counter.n++) }),
            onResponse: (status, body) => {
              if (status === 202) ids.push((JSON.parse(body) as { id: string }).id);
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        latencies.sort((a, b) => a - b);
        resolve({
          seconds: result.duration,
          accepted: latencies.length,
          non2xx,
          errors: result.errors + result.timeouts,
          latency: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN },
          ids,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status === 202) latencies.push(ms);
      else if (status < 200 || status >= 300) non2xx++;
    });
  });
}

interface Measured {
  name: string;
  result: LoadResult;
  cpu: ReturnType<typeof cpuSince>;
  notes: string[];
}

const rateOf = ({ result }: Pick<Measured, 'result'>) => result.accepted / result.seconds;

/** Microseconds of the server's CPU (every thread and process it counts) per accepted send. */
const cpuPerSend = ({ result, cpu }: Pick<Measured, 'result' | 'cpu'>) => ((cpu.server / 100) * 1e6) / rateOf({ result });

/**
 * A warm-up, then the measured run against `urls` (the load split over them); `pids` are the
 * processes that serve (for the CPU columns). With `byProcess`, a note gives each named process's
 * share of the CPU during the measured run; with several URLs, a note gives each one's rate; each
 * of `counters` is read before and after the measured run, and a note gives its growth per send.
 */
async function measure(
  name: string,
  urls: string[],
  key: string,
  pids: number[],
  byProcess: Record<string, number> = {},
  counters: Record<string, () => Promise<number>> = {},
): Promise<Measured & { warmupIds: string[] }> {
  const counter = { n: 0 };
  const busy = await waitForQuiet();
  console.log(
    `${name}: ${WARMUP} s warm-up, then ${DURATION} s at ${CONNECTIONS} connections (machine ${fmt(busy)}% busy before)`,
  );
  const warm = WARMUP > 0 ? await load(urls, key, WARMUP, counter) : { ids: [] };
  const each = Object.entries(byProcess).map(([n, pid]) => [n, cpuSnapshot([pid])] as const);
  const counted = Object.entries(counters);
  const before = await Promise.all(counted.map(([, read]) => read()));
  const cpu = cpuSnapshot(pids);
  const { byUrl, ...result } = await load(urls, key, DURATION, counter);
  const after = await Promise.all(counted.map(([, read]) => read()));
  const notes = each.length
    ? [`CPU by process (% of a core): ${each.map(([n, s]) => `${n} ${fmt(cpuSince(s).server)}`).join(', ')}`]
    : [];
  counted.forEach(([what], i) => notes.push(`${what} per accepted send: ${fmt((after[i]! - before[i]!) / result.accepted, 1)}`));
  if (byUrl.length > 1) notes.push(`accepted/s by ingress: ${byUrl.map((r) => fmt(r.accepted / r.seconds)).join(', ')}`);
  return { name, result, cpu: cpuSince(cpu), notes, warmupIds: warm.ids };
}

/** Waits for the sandbox pipeline to capture every accepted message, then checks the ids. */
async function verifyGatepost(gp: BenchGatepost, received: string[]): Promise<string[]> {
  const lines = SEND_AT_S !== null ? await verifyScheduled(gp, received) : await verifyCaptured(gp, received);
  lines.push(`Gatepost resident memory after the run: ${rssMiB(gp.pid)} MiB (peak ${rssMiB(gp.pid, 'VmHWM')} MiB)`);
  if (IDLE_S > 0) {
    await sleep(IDLE_S * 1000);
    lines.push(`Gatepost resident memory after ${IDLE_S} s idle: ${rssMiB(gp.pid)} MiB`);
  }
  return lines;
}

/** Every received id must reach the sandbox inbox. */
async function verifyCaptured(gp: BenchGatepost, received: string[]): Promise<string[]> {
  const started = Date.now();
  const last = received[received.length - 1];
  // Deliveries leave the outbox in commit order: once the last one is captured, nearly all are.
  while (last && Date.now() - started < 300_000) {
    const m = await call(gp.url, 'GET', `/v1/messages/${last}`, gp.key);
    if (m.body?.status === 'sent') break;
    await sleep(100);
  }
  // Before the inbox is listed: listing every capture takes seconds of its own.
  const drainSeconds = (Date.now() - started) / 1000;
  const stored = await capturedUntil(gp, (inbox) => inbox.size >= received.length, started + 300_000);
  const missing = received.filter((id) => !stored.has(id)).length;
  const sample = await Promise.all(
    [0, 1, 2, 3, 4].map((i) => call(gp.url, 'GET', `/v1/messages/${received[Math.floor((i * received.length) / 5)]}`, gp.key)),
  );
  const sampleOk = sample.filter((m) => m.status === 200 && m.body.status === 'sent').length;
  return [
    `202 answers received (warm-up + run): ${fmt(received.length)}; messages in the sandbox inbox: ${fmt(stored.size)}; ` +
      `received ids missing from the inbox: ${missing}`,
    `inbox minus received: ${stored.size - received.length} (requests committed but cut off when the load generator stopped; at most ${2 * CONNECTIONS})`,
    `capture backlog drained ${drainSeconds.toFixed(1)} s after the load stopped; ${sampleOk}/5 sampled GET /v1/messages/:id show status "sent"`,
    `sends both admitted and captured: ${fmt(received.length)} in ${WARMUP + DURATION} s of load and ${drainSeconds.toFixed(1)} s of drain, ` +
      `${fmt(received.length / (WARMUP + DURATION + drainSeconds))}/s sustained`,
  ];
}

/** With --send-at nothing is delivered during the run: sample the received ids instead. */
async function verifyScheduled(gp: BenchGatepost, received: string[]): Promise<string[]> {
  const sample = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      call(gp.url, 'GET', `/v1/messages/${received[Math.floor((i * received.length) / 20)]}`, gp.key),
    ),
  );
  const ok = sample.filter((m) => m.status === 200 && m.body.status === 'scheduled').length;
  return [
    `every send scheduled ${SEND_AT_S} s ahead (admission only); 202 answers received: ${fmt(received.length)}; ` +
      `${ok}/20 sampled GET /v1/messages/:id show status "scheduled"`,
  ];
}

function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(REDIS.port, REDIS.host);
    socket.setTimeout(1000);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => (socket.destroy(), resolve(d.toString().startsWith('+PONG'))));
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => (socket.destroy(), resolve(false)));
  });
}

/**
 * Commands the Redis server has run, all clients and databases together (INFO commandstats):
 * whatever else uses this Redis at the time counts too.
 */
async function redisCommands(): Promise<number> {
  const redis = new Redis(REDIS);
  const info = await redis.info('commandstats');
  redis.disconnect();
  return [...info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/**
 * Calls between the topology's apps and their daprd, from each app's call log
 * (gatepost_dapr_calls_total): all kinds but the calls an app ran on its own actors without its
 * daprd (`actor_call_local`), or those of `kind` (`reminder_registered`, ...).
 */
function daprCalls(gp: { urls: string[]; workDir: string }, kind?: string): () => Promise<number> {
  // Each actor host says where its metrics are in its log; the ingresses serve them on their URL.
  const hosts = readdirSync(gp.workDir)
    .filter((f) => /^actors\d*\.log$/.test(f))
    .map((f) => /metrics of this actor host: GET (\S+)\/metrics/.exec(readFileSync(join(gp.workDir, f), 'utf8'))?.[1])
    .filter((url): url is string => url !== undefined);
  return async () => {
    let n = 0;
    for (const url of [...gp.urls, ...hosts]) {
      const text = await (await fetch(`${url}/metrics`)).text();
      for (const m of text.matchAll(/^gatepost_dapr_calls_total\{kind="([^"]+)",target="[^"]+"\} (\d+)$/gm)) {
        if (kind === undefined ? m[1] !== 'actor_call_local' : m[1] === kind) n += Number(m[2]);
      }
    }
    return n;
  };
}

async function redisPid(): Promise<number> {
  const redis = new Redis(REDIS);
  const info = await redis.info('server');
  redis.disconnect();
  return Number(/process_id:(\d+)/.exec(info)?.[1]);
}

/** Starts the local Redis if nothing answers; true when this run started it (and so stops it). */
async function ensureRedis(): Promise<boolean> {
  if (await redisAnswers()) return false;
  execFileSync('redis-server', [
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '-::1',
    '--port',
    String(REDIS.port),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    '/var/lib/redis',
    '--logfile',
    '/var/log/redis/ci.log',
  ]);
  for (let i = 0; i < 50 && !(await redisAnswers()); i++) await sleep(100);
  if (!(await redisAnswers())) throw new Error('redis-server did not answer');
  return true;
}

async function baselineFastify(): Promise<Measured> {
  const fastify = await startChild('Fastify', ['bench/servers/fastify.server.ts']);
  try {
    return await measure('Fastify bare route (ceiling)', [fastify.url], 'none', [fastify.pid]);
  } finally {
    await fastify.stop();
  }
}

async function baselineExpressBullmq(): Promise<Measured> {
  const startedRedis = await ensureRedis();
  const queueName = `bench-send-${process.pid}-${Date.now()}`;
  let measured: Measured | undefined;
  try {
    const express = await startChild('Express+BullMQ', ['bench/servers/express-bullmq.server.ts'], { BENCH_QUEUE: queueName });
    try {
      measured = await measure('Express 5 + zod + BullMQ', [express.url], 'none', [express.pid, await redisPid()]);
    } finally {
      await express.stop();
    }
  } finally {
    // Remove the queue's jobs and keys, whatever happened above.
    const queue = new Queue(queueName, { connection: REDIS });
    await queue.obliterate({ force: true });
    await queue.close();
    const redis = new Redis(REDIS);
    const left = (await redis.keys(`bull:${queueName}:*`)).length;
    redis.disconnect();
    measured?.notes.push(`BullMQ queue removed after the run; Redis keys left: ${left}`);
    if (startedRedis) execFileSync('redis-cli', ['-p', String(REDIS.port), 'shutdown', 'nosave']);
  }
  return measured;
}

/** One server measured once: started fresh, measured, stopped. */
type Run = () => Promise<Measured>;

async function gatepostEmbedded(): Promise<Measured> {
  const name = SEND_AT_S === null ? 'Gatepost (sandbox, fsync on)' : `Gatepost (send_at +${SEND_AT_S} s: admission only)`;
  return gatepostEmbeddedAs(name, {}, false);
}

/** --observability: as it ships, with a scrape a second (the runs' names tell the two apart). */
const observed = () => gatepostEmbeddedAs('Gatepost with metrics (scraped 1/s) and request log', {}, true);
const unobserved = () =>
  gatepostEmbeddedAs('Gatepost without (GATEPOST_METRICS=false, LOG_LEVEL=warn)', {
    GATEPOST_METRICS: 'false',
    GATEPOST_LOG_LEVEL: 'warn',
  });

async function gatepostEmbeddedAs(name: string, env: Record<string, string>, scrape = false): Promise<Measured> {
  const gp = await startGatepost(nodeArgs(), env);
  let scrapes = 0;
  const scraper = scrape
    ? setInterval(() => {
        void fetch(`${gp.url}/metrics`)
          .then(async (res) => (await res.text(), res.ok && scrapes++))
          .catch(() => {});
      }, 1000)
    : null;
  try {
    const m = await measure(name, [gp.url], gp.key, [gp.pid]);
    if (scraper) clearInterval(scraper);
    m.notes = [
      ...(scraper ? [`GET /metrics answered ${scrapes} scrapes during the warm-up and run`] : []),
      ...(await verifyGatepost(gp, [...m.warmupIds, ...m.result.ids])),
    ];
    return m;
  } finally {
    if (scraper) clearInterval(scraper);
    await gp.stop();
  }
}

/** The Dapr topology with `replicas` actor hosts and as many ingresses, the load split over the ingresses. */
const gatepostDapr =
  (replicas: number): Run =>
  async () => {
    const gp = await startGatepostDapr({ actorHosts: replicas, ingresses: replicas }, nodeArgs());
    try {
      const what = SEND_AT_S === null ? 'sandbox' : `send_at +${SEND_AT_S} s`;
      const name = `Gatepost on Dapr${replicas > 1 ? `, ${replicas} hosts + ${replicas} ingresses` : ''} (${what})`;
      // Server CPU: the apps, their sidecars, placement and scheduler, and the shared Redis.
      const processes = { ...gp.pids(), redis: await redisPid() };
      const m = await measure(name, gp.urls, gp.key, Object.values(processes), processes, {
        'Redis commands (all its clients)': redisCommands,
        'calls between apps and their daprd': daprCalls(gp),
        'reminders registered': daprCalls(gp, 'reminder_registered'),
      });
      m.notes.push(...(await verifyGatepost(gp, [...m.warmupIds, ...m.result.ids])));
      m.notes.push(`logs of the topology: ${gp.workDir}`);
      return m;
    } finally {
      await gp.stop();
    }
  };

async function main() {
  console.log(
    `bench:send on ${cpus().length} cores, Node ${process.version}, Gatepost at ${gatepostRevision()}, ${ROUNDS} round(s), load from ${flags.load}\n`,
  );
  if (flags.load !== 'wrk' && flags.load !== 'autocannon') throw new Error(`--load ${flags.load}: wrk or autocannon`);
  if (flags.load === 'wrk') ensureWrk();
  const runtimes = flags.runtime === 'both' ? ['embedded', 'dapr'] : [flags.runtime];
  if (runtimes.some((r) => r !== 'embedded' && r !== 'dapr'))
    throw new Error(`--runtime ${flags.runtime}: embedded, dapr or both`);
  const runs: Run[] = flags.observability
    ? [observed, unobserved]
    : [
        ...(runtimes.includes('embedded') ? [gatepostEmbedded] : []),
        ...(runtimes.includes('dapr') ? [gatepostDapr(1), ...(flags['scale-out'] ? [gatepostDapr(2)] : [])] : []),
        ...(flags['gatepost-only'] ? [] : [baselineFastify, baselineExpressBullmq]),
      ];

  const rounds = await inTurns(ROUNDS, runs);

  console.log(
    '\n' +
      table(
        [
          'server',
          'round',
          'accepted/s',
          '202s',
          'non-2xx',
          'errors',
          'p50 ms',
          'p99 ms',
          'max ms',
          'server CPU',
          'CPU us/send',
          'load gen CPU',
          'other CPU',
        ],
        runs.flatMap((_, i) =>
          rounds.map((rows, round) => {
            const { name, result: r, cpu } = rows[i]!;
            return [
              name,
              String(round + 1),
              fmt(rateOf(rows[i]!)),
              fmt(r.accepted),
              fmt(r.non2xx),
              fmt(r.errors),
              fmt(r.latency.p50, 2),
              fmt(r.latency.p99, 2),
              fmt(r.latency.max, 2),
              `${fmt(cpu.server)}%`,
              fmt(cpuPerSend({ result: r, cpu })),
              `${fmt(cpu.loadgen)}%`,
              `${fmt(cpu.other)}%`,
            ];
          }),
        ),
      ),
  );
  // Ratios within a round, where both servers ran on the same machine within minutes of each other.
  const ratios = (gp: number, other: string, of: (m: Measured) => number) => {
    const i = runs.findIndex((_, j) => rounds[0]![j]!.name.startsWith(other));
    return i < 0 ? [] : rounds.map((rows) => of(rows[gp]!) / of(rows[i]!));
  };
  const line = (label: string, xs: number[]) => {
    if (xs.length === 0) return;
    const summary = xs.length > 1 ? `; median ${fmt(median(xs), 2)}` : '';
    console.log(`${label}: ${xs.map((x) => fmt(x, 2)).join(', ')}${summary}`);
  };
  console.log();
  if (flags.observability) {
    line(
      'with metrics and request log / without, accepted/s by round',
      rounds.map((rows) => rateOf(rows[0]!) / rateOf(rows[1]!)),
    );
    line(
      'with / without, CPU per send by round',
      rounds.map((rows) => cpuPerSend(rows[0]!) / cpuPerSend(rows[1]!)),
    );
  }
  // Scale-out: the two-replica topology against one of each, in the same round.
  const daprOne = runs.findIndex((_, j) => rounds[0]![j]!.name.startsWith('Gatepost on Dapr ('));
  const daprTwo = runs.findIndex((_, j) => rounds[0]![j]!.name.startsWith('Gatepost on Dapr, '));
  if (daprOne >= 0 && daprTwo >= 0) {
    line(
      'Dapr 2 hosts + 2 ingresses / 1 + 1, accepted/s by round',
      rounds.map((r) => rateOf(r[daprTwo]!) / rateOf(r[daprOne]!)),
    );
    line(
      'Dapr 2 hosts + 2 ingresses / 1 + 1, CPU per send by round',
      rounds.map((r) => cpuPerSend(r[daprTwo]!) / cpuPerSend(r[daprOne]!)),
    );
  }
  runs.forEach((_, gp) => {
    const name = rounds[0]![gp]!.name;
    if (!name.startsWith('Gatepost')) return;
    const label = name.startsWith('Gatepost on Dapr') ? 'Gatepost on Dapr' : 'Gatepost';
    line(`${label} / Fastify ceiling, by round`, ratios(gp, 'Fastify', rateOf));
    line(`${label} / Express+BullMQ, by round`, ratios(gp, 'Express', rateOf));
    line(
      `Express+BullMQ CPU per send / ${label}'s, by round`,
      ratios(gp, 'Express', (m) => 1 / cpuPerSend(m)),
    );
  });
  const answers = flags.load === 'wrk' ? 'every answer' : '202 answers';
  console.log(`(${DURATION} s per server after a ${WARMUP} s warm-up, ${CONNECTIONS} connections; latencies of ${answers};`);
  console.log(` CPU in % of one core during the measured run; "CPU us/send" is the server's CPU time, all its threads and`);
  console.log(
    ` processes (Redis for BullMQ), per accepted send; "other" is everything else on the machine, so a clean run has it near 0)\n`,
  );
  rounds.forEach((rows, round) => {
    for (const m of rows) for (const note of m.notes) console.log(`${m.name}, round ${round + 1}: ${note}`);
  });
}

await main();
process.exit(0);
