// npm run bench:broadcast [-- --contacts 100000 --rate 50 --seconds 20 --duration 10 --connections 64 --profile DIR]
// A broadcast to 100,000 contacts (a sandbox broadcast: every message captured, nothing
// delivered) fanned out while a second tenant sends transactional mail at a steady rate, on one
// embedded Gatepost. In the same run:
// - single sends (POST /v1/emails under wrk, as bench:send measures them) against the fan-out's
//   admissions per second (the broadcast's admitted over its first page's start to its last page's
//   end): goal at least 1;
// - Gatepost's resident memory while the broadcast fans out and its messages are captured, and its
//   peak (VmHWM): goal at most 300 MB;
// - the transactional sender's p99 (each POST /v1/emails answered, at a steady rate, open loop)
//   with the broadcast fanning out, against its p99 alone just before: goal at most 2 ×.
import { parseArgs } from 'node:util';
import {
  call,
  fmt,
  gatepostRevision,
  importGeneratedContacts,
  percentile,
  profileArgs,
  rssMiB,
  sendBody,
  sleep,
  startGatepost,
  table,
  waitForQuiet,
} from './common.ts';
import { ensureWrk, wrkLoad } from './wrk.load.ts';

const { values: flags } = parseArgs({
  options: {
    contacts: { type: 'string', default: '100000' },
    /** The transactional sender's sends per second. */
    rate: { type: 'string', default: '50' },
    /** How long the transactional sender runs alone. */
    seconds: { type: 'string', default: '20' },
    /** The single-send measurement (wrk): its length and connections. */
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    profile: { type: 'string' },
  },
});
const CONTACTS = Number(flags.contacts);
const RATE = Number(flags.rate);
const ALONE_S = Number(flags.seconds);

const gp = await startGatepost(profileArgs(flags.profile));
try {
  ensureWrk();
  // The transactional tenant is the bench's sandbox tenant; the broadcaster a tenant of its own.
  const made = await call(gp.url, 'POST', '/v1/admin/tenants', gp.adminToken, { name: 'broadcaster' });
  const live = (await call(gp.url, 'POST', `/v1/admin/tenants/${made.body.id}/keys`, gp.adminToken, { kind: 'live' })).body
    .key as string;
  const audience = (await call(gp.url, 'POST', '/v1/audiences', live, { name: 'everyone' })).body.id as string;
  const imported = await importGeneratedContacts(gp.url, live, audience, CONTACTS);
  if (imported.report.added !== CONTACTS)
    throw new Error(`import answered ${imported.status} ${JSON.stringify(imported.report)}`);
  const rssIdle = rssMiB(gp.pid);

  // Single sends, as bench:send measures them: a warm-up, then the measured run.
  const wrk = (seconds: number, label: string) =>
    wrkLoad({
      url: `${gp.url}/v1/emails`,
      key: gp.key,
      seconds,
      connections: Number(flags.connections),
      body: JSON.stringify(sendBody('{N}')),
      label,
    });
  await waitForQuiet();
  await wrk(2, 'warm');
  const single = await wrk(Number(flags.duration), 'single');
  const singleRate = single.accepted / single.seconds;

  /** Sends at RATE a second, open loop, until `until()`; each answer's latency, ms. */
  async function steady(label: string, until: () => boolean): Promise<{ latencies: number[]; refused: number }> {
    const latencies: number[] = [];
    let refused = 0;
    const pending: Promise<void>[] = [];
    const start = performance.now();
    for (let n = 0; !until(); n++) {
      const due = start + (n * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(
        (async () => {
          const sent = performance.now();
          const res = await call(gp.url, 'POST', '/v1/emails', gp.key, sendBody(`${label}-${n}`));
          if (res.status === 202) latencies.push(performance.now() - sent);
          else refused++;
        })(),
      );
    }
    await Promise.all(pending);
    return { latencies: latencies.sort((a, b) => a - b), refused };
  }

  await waitForQuiet();
  const aloneUntil = Date.now() + ALONE_S * 1000;
  const alone = await steady('alone', () => Date.now() >= aloneUntil);

  await waitForQuiet();
  const draft = await call(gp.url, 'POST', '/v1/broadcasts', live, {
    name: 'bench',
    audience_id: audience,
    from: 'News <news@bench.example>',
    subject: 'News for {{name}}',
    html: '<p>Hi {{name}}, you are on {{plan}}. <a href="https://shop.example/sale">The sale</a></p>',
    sandbox: true,
  });
  const id = draft.body.id as string;
  let broadcast = (await call(gp.url, 'POST', `/v1/broadcasts/${id}/send`, live)).body;
  let rssMax = 0;
  const watch = (async () => {
    while (broadcast.status !== 'sent') {
      await sleep(250);
      rssMax = Math.max(rssMax, rssMiB(gp.pid));
      broadcast = (await call(gp.url, 'GET', `/v1/broadcasts/${id}`, live)).body;
    }
  })();
  const beside = await steady('beside', () => broadcast.status === 'sent');
  await watch;
  const fanOutS = (Date.parse(broadcast.progress.finished_at) - Date.parse(broadcast.progress.started_at)) / 1000;
  const fanOutRate = broadcast.progress.admitted / fanOutS;

  // Every message captured (the broadcast's `sent`), and memory meanwhile.
  const capturedBy = Date.now() + 600_000;
  while (broadcast.results.sent < CONTACTS && Date.now() < capturedBy) {
    await sleep(1000);
    rssMax = Math.max(rssMax, rssMiB(gp.pid));
    broadcast = (await call(gp.url, 'GET', `/v1/broadcasts/${id}`, live)).body;
  }
  const captureS = (Date.now() - Date.parse(broadcast.progress.started_at)) / 1000;
  const peak = rssMiB(gp.pid, 'VmHWM');

  const p99 = (l: number[]) => percentile(l, 99);
  console.log(`bench:broadcast (Gatepost ${gatepostRevision()}), ${fmt(CONTACTS)} contacts, transactional at ${RATE}/s`);
  console.log(
    table(
      ['measure', 'figure'],
      [
        ['single sends (wrk, POST /v1/emails)', `${fmt(singleRate)}/s (p99 ${fmt(single.latency.p99, 1)} ms)`],
        ['fan-out admissions', `${fmt(fanOutRate)}/s (${fmt(broadcast.progress.admitted)} in ${fmt(fanOutS, 1)} s)`],
        ['fan-out / single sends', fmt(fanOutRate / singleRate, 2)],
        ['every message captured', `${fmt(broadcast.results.sent)} after ${fmt(captureS, 1)} s`],
        [
          'transactional alone: sent, p50 / p99',
          `${alone.latencies.length} (${alone.refused} refused), ${fmt(percentile(alone.latencies, 50), 1)} / ${fmt(p99(alone.latencies), 1)} ms`,
        ],
        [
          'beside the broadcast: sent, p50 / p99',
          `${beside.latencies.length} (${beside.refused} refused), ${fmt(percentile(beside.latencies, 50), 1)} / ${fmt(p99(beside.latencies), 1)} ms`,
        ],
        ['p99 beside / alone', fmt(p99(beside.latencies) / p99(alone.latencies), 2)],
        ['resident memory: idle (contacts in), most while sending, peak (VmHWM)', `${rssIdle} / ${rssMax} / ${peak} MiB`],
      ],
    ),
  );
  if (broadcast.progress.admitted !== CONTACTS || broadcast.results.sent !== CONTACTS) {
    throw new Error(
      `the broadcast admitted ${broadcast.progress.admitted} and captured ${broadcast.results.sent} of ${CONTACTS}`,
    );
  }
} finally {
  await gp.stop();
}
