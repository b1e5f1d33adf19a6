// npm run bench:tracking [-- --duration 10 --warmup 3 --connections 32 --messages 20000 --rounds 3 --profile DIR]
// Click redirects per second with the event recorded: a fresh Gatepost (embedded, sandbox key)
// captures N broadcast messages with a tracked link each, then autocannon follows their tracked
// links (GET /t/c/<token>, answered 302 at once, email.clicked recorded in groups moments later:
// docs/tracking.md), next to a bare Fastify route answering a 302 (bench/servers/fastify.server.ts),
// the two taking turns for each round. The links go round the messages so that none is clicked
// more than the 100 times a message records (docs/tracking.md); afterwards every message's
// timeline is read until its email.clicked events add up to the 302s answered. Each server's CPU
// time a request is shown beside its rate: on a machine shared with other work, it moves less.
// Goal (issue 24): at least 0.5 of the bare route's rate, and a p99 of at most 20 ms.
import autocannon from 'autocannon';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import {
  call,
  cpuSince,
  cpuSnapshot,
  fmt,
  gatepostRevision,
  inTurns,
  median,
  profileArgs,
  sleep,
  startChild,
  startGatepost,
  table,
} from './common.ts';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    messages: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    /** Write a CPU profile of Gatepost (node --cpu-prof) into this directory. */
    profile: { type: 'string' },
  },
});
const DURATION = Number(flags.duration);
const WARMUP = Number(flags.warmup);
const CONNECTIONS = Number(flags.connections);
const MESSAGES = Number(flags.messages);
const ROUNDS = Number(flags.rounds);
const GOAL_RATIO = 0.5;
const GOAL_P99_MS = 20;
/** The clicks a message records (MAX_RECORDED_HITS in actors/message/message.actor.ts). */
const RECORDED_PER_MESSAGE = 100;
const DESTINATION = 'https://shop.example/sale?item=42';

interface Run {
  rate: number;
  p50: number;
  p99: number;
  redirects: number;
  other: number;
  /** The server's CPU time a 302, in microseconds (all its threads). */
  cpuUs: number;
}

/** autocannon for `seconds` against the server `pid` at `url`, each request's path from `path()`; 302s counted. */
function load(pid: number, url: string, seconds: number, path: () => string): Promise<Run> {
  let redirects = 0;
  let other = 0;
  const cpu = cpuSnapshot([pid]);
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({ ...request, path: path() }),
            onResponse: (status) => void (status === 302 ? redirects++ : other++),
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        const rate = redirects / result.duration;
        const cpuUs = (cpuSince(cpu).server / 100 / rate) * 1e6;
        resolve({ rate, p50: result.latency.p50, p99: result.latency.p99, redirects, other, cpuUs });
      },
    ),
  );
}

const gp = await startGatepost(profileArgs(flags.profile));
const fastify = await startChild('Fastify', ['bench/servers/fastify.server.ts']);
try {
  // The messages, 500 a batch: tracked links only, no pixel or unsubscribe fields.
  const ids: string[] = [];
  for (let from = 0; from < MESSAGES; from += 500) {
    const items = Array.from({ length: Math.min(500, MESSAGES - from) }, (_, i) => ({
      to: `reader${from + i}@example.com`,
      subject: 'Sale',
      html: `<p><a href="${DESTINATION}">Sale</a></p>`,
      track_clicks: true,
      track_opens: false,
      list_unsubscribe: false,
    }));
    const sent = await call<{ results: { id?: string }[]; refused: number }>(gp.url, 'POST', '/v1/emails/batch', gp.key, items);
    if (sent.status !== 200 || sent.body.refused > 0)
      throw new Error(`sending: ${sent.status} ${JSON.stringify(sent.body).slice(0, 500)}`);
    ids.push(...sent.body.results.map((r) => r.id!));
  }
  // Each capture's tracked link, once all are captured.
  const paths = new Map<string, string>();
  const deadline = Date.now() + 120_000;
  while (paths.size < MESSAGES) {
    if (Date.now() > deadline) throw new Error(`only ${paths.size} of ${MESSAGES} messages were captured in 2 minutes`);
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { data: { message_id: string; html: string }[]; next_cursor: string | null } } =
        await call(gp.url, 'GET', `/v1/sandbox/messages?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, gp.key);
      for (const c of page.body.data) {
        const link = /href="([^"]*\/t\/c\/[^"]*)"/.exec(c.html)?.[1];
        if (link) paths.set(c.message_id, new URL(link).pathname);
      }
      cursor = page.body.next_cursor;
    } while (cursor);
  }
  const links = ids.map((id) => paths.get(id)!);
  const capacity = MESSAGES * RECORDED_PER_MESSAGE;
  let clicks = 0;
  const nextLink = () => {
    if (clicks >= capacity) throw new Error(`more than ${fmt(capacity)} clicks: run with more --messages`);
    return links[clicks++ % links.length]!;
  };

  const first = await fetch(gp.url + links[0], { redirect: 'manual' });
  clicks++;
  if (first.status !== 302 || first.headers.get('location') !== DESTINATION)
    throw new Error(`a tracked link answered ${first.status} ${first.headers.get('location')}`);

  /** Every 302 Gatepost answered, warm-up runs included: each must be on a timeline. */
  let redirected = 1;
  const runs = [
    async () => {
      if (WARMUP > 0) redirected += (await load(gp.pid, gp.url, WARMUP, nextLink)).redirects;
      const run = await load(gp.pid, gp.url, DURATION, nextLink);
      redirected += run.redirects;
      return run;
    },
    async () => {
      if (WARMUP > 0) await load(fastify.pid, fastify.url, WARMUP, () => '/t/c/bare');
      return load(fastify.pid, fastify.url, DURATION, () => '/t/c/bare');
    },
  ];
  const rounds = await inTurns(ROUNDS, runs);

  // Every 302 Gatepost answered is an email.clicked on its message's timeline, moments after it.
  const clickedOn = async (id: string) => {
    const m = await call<{ events: { type: string }[] }>(gp.url, 'GET', `/v1/messages/${id}`, gp.key);
    return m.body.events.filter((e) => e.type === 'email.clicked').length;
  };
  let recorded = 0;
  let looks = 0;
  for (const settleBy = Date.now() + 30_000; ; await sleep(500)) {
    recorded = 0;
    looks++;
    for (const id of ids) recorded += await clickedOn(id);
    if (recorded >= redirected || Date.now() > settleBy) break;
  }

  console.log(
    `\nbench:tracking on ${cpus().length} cores, Node ${process.version}, Gatepost at ${gatepostRevision()}; ` +
      `${CONNECTIONS} connections, ${DURATION} s a run (after ${WARMUP} s untimed), ${fmt(MESSAGES)} messages\n`,
  );
  const rows = rounds.map(([g, f], i) => [
    String(i + 1),
    fmt(g!.rate),
    `${g!.p50} / ${g!.p99}`,
    fmt(g!.cpuUs),
    fmt(f!.rate),
    `${f!.p50} / ${f!.p99}`,
    fmt(f!.cpuUs),
    fmt(g!.rate / f!.rate, 2),
    String(g!.other + f!.other),
  ]);
  console.log(
    table(
      [
        'round',
        'Gatepost clicks/s',
        'p50 / p99 ms',
        'CPU µs',
        'bare Fastify 302/s',
        'p50 / p99 ms',
        'CPU µs',
        'ratio',
        'not 302',
      ],
      rows,
    ),
  );
  const ratio = median(rounds.map(([g, f]) => g!.rate / f!.rate));
  const p99 = median(rounds.map(([g]) => g!.p99));
  console.log(
    `\nmedian ratio ${fmt(ratio, 2)} (goal >= ${GOAL_RATIO}: ${ratio >= GOAL_RATIO ? 'met' : 'MISSED'}); ` +
      `median p99 ${p99} ms (goal <= ${GOAL_P99_MS} ms: ${p99 <= GOAL_P99_MS ? 'met' : 'MISSED'})`,
  );
  // Requests cut off when a run ended may have been recorded without their 302 being counted.
  console.log(
    `email.clicked on the timelines: ${fmt(recorded)}, for ${fmt(redirected)} redirects answered (${fmt(clicks)} requests made), ` +
      `all there at look ${looks} through every timeline`,
  );
  if (recorded < redirected || rounds.some(([g, f]) => g!.other + f!.other > 0)) process.exitCode = 1;
} finally {
  await gp.stop();
  await fastify.stop();
}
