// npm run bench:validate [-- --duration 10 --warmup 3 --connections 32 --domains 100 --batch 100]
// Address validations per second through HTTP to a real Gatepost process (embedded, a sandbox
// key), with its DNS a server of the bench's own on loopback (GATEPOST_DNS_SERVERS) publishing
// an MX for each of N domains, and the cache warm: every domain is validated once before the
// timed runs. Two runs: POST /v1/validate, one address a request, each request a new address;
// and POST /v1/validate/batch, `--batch` addresses a request. Every answer is checked: each
// address must come back `deliverable`. Goal (issue 23): at least 5,000 validations a second.
import autocannon from 'autocannon';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { startDns } from '../test/harness/dns.harness.ts';
import { call, fmt, gatepostRevision, startGatepost, table } from './common.ts';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    domains: { type: 'string', default: '100' },
    batch: { type: 'string', default: '100' },
  },
});
const DURATION = Number(flags.duration);
const WARMUP = Number(flags.warmup);
const CONNECTIONS = Number(flags.connections);
const DOMAINS = Number(flags.domains);
const BATCH = Number(flags.batch);
const GOAL = 5_000;

// Gatepost keeps a domain's MX route a minute (mta/mx.resolve.ts): a run longer than that would
// measure look-ups again, not a warm cache.
if (WARMUP + DURATION >= 50)
  throw new Error('--warmup and --duration must stay under 50 s together: the DNS cache keeps a route 60 s');

const domain = (n: number) => `d${n % DOMAINS}.bench.example`;
const address = (n: number) => `user${n}@${domain(n)}`;

const dns = await startDns({
  'mx.bench.example': { A: ['192.0.2.25'] },
  ...Object.fromEntries(
    Array.from({ length: DOMAINS }, (_, i) => [domain(i), { MX: [{ exchange: 'mx.bench.example', priority: 10 }] }]),
  ),
});
const gp = await startGatepost([], { GATEPOST_DNS_SERVERS: dns.address });

interface Run {
  name: string;
  validations: number;
  refused: number;
  wrong: number;
  seconds: number;
  latency: string;
}

/** autocannon for `seconds`, each request's body from `body(n)`; `count(answer)` checks and counts an answer's validations. */
function load(
  seconds: number,
  name: string,
  path: string,
  body: (n: number) => unknown,
  count: (answer: any) => { ok: number; wrong: number },
): Promise<Run> {
  const run: Run = { name, validations: 0, refused: 0, wrong: 0, seconds, latency: '' };
  let n = 0;
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: gp.url,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path,
            headers: { authorization: `Bearer ${gp.key}`, 'content-type': 'application/json' },
            setupRequest: (request) => ({ ...request, body: JSON.stringify(body(n++)) }),
            onResponse: (status, text) => {
              if (status !== 200) return void run.refused++;
              const { ok, wrong } = count(JSON.parse(text));
              run.validations += ok;
              run.wrong += wrong;
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        run.seconds = result.duration;
        run.latency = `${result.latency.p50} / ${result.latency.p99}`;
        resolve(run);
      },
    ),
  );
}

const deliverable = (v: { result: string }) => v.result === 'deliverable';

try {
  // Warm: each domain's route asked once, and the Gatepost's code paths run.
  for (let from = 0; from < DOMAINS; from += 1000) {
    const addresses = Array.from({ length: Math.min(1000, DOMAINS - from) }, (_, i) => address(from + i));
    const warm = await call(gp.url, 'POST', '/v1/validate/batch', gp.key, { addresses });
    if (warm.status !== 200 || !warm.body.results.every(deliverable)) {
      throw new Error(`warming: ${warm.status} ${JSON.stringify(warm.body).slice(0, 500)}`);
    }
  }
  const asked = dns.queries.length;

  const kinds: [string, string, (n: number) => unknown, (answer: any) => { ok: number; wrong: number }][] = [
    [
      'POST /v1/validate',
      '/v1/validate',
      (n) => ({ address: address(n) }),
      (v) => (deliverable(v) ? { ok: 1, wrong: 0 } : { ok: 0, wrong: 1 }),
    ],
    [
      `POST /v1/validate/batch (${BATCH} a request)`,
      '/v1/validate/batch',
      (n) => ({ addresses: Array.from({ length: BATCH }, (_, i) => address(n * BATCH + i)) }),
      (answer: { results: { result: string }[] }) => {
        const ok = answer.results.filter(deliverable).length;
        return { ok, wrong: answer.results.length - ok };
      },
    ],
  ];
  const runs: Run[] = [];
  for (const kind of kinds) {
    // Untimed first, so that the timed run meets code the JIT has compiled.
    if (WARMUP > 0) await load(WARMUP, ...kind);
    runs.push(await load(DURATION, ...kind));
  }
  console.log(
    `\nbench:validate on ${cpus().length} cores, Node ${process.version}, Gatepost at ${gatepostRevision()}; ` +
      `${CONNECTIONS} connections, ${DURATION} s a run, ${fmt(DOMAINS)} domains, DNS questions during the runs: ${dns.queries.length - asked}\n`,
  );
  console.log(
    table(
      ['run', 'validations/s', 'p50 / p99 ms', 'not 200', 'not deliverable', `>= ${fmt(GOAL)}/s`],
      runs.map((r) => {
        const rate = r.validations / r.seconds;
        return [r.name, fmt(rate), r.latency, String(r.refused), String(r.wrong), rate >= GOAL ? 'met' : 'MISSED'];
      }),
    ),
  );
  if (runs.some((r) => r.refused > 0 || r.wrong > 0)) process.exitCode = 1;
} finally {
  await gp.stop();
  await dns.close();
}
