// npm run bench:scheduled [-- --scheduled 100000 --lead 75 --spread 5 --sample 500 --profile DIR]
// Schedules N sandbox messages `lead` seconds ahead, spread over `spread` seconds, through
// POST /v1/emails/batch; reports Gatepost's resident memory while they wait and after they fire,
// and how late they fire (the message.queued event against send_at, on a sample).
import { parseArgs } from 'node:util';
import {
  call,
  capturedUntil,
  cpuSince,
  cpuSnapshot,
  fmt,
  gatepostRevision,
  percentile,
  profileArgs,
  rssMiB,
  sendBody,
  sleep,
  startGatepost,
  table,
  waitForQuiet,
  type BenchGatepost,
} from './common.ts';

const { values: flags } = parseArgs({
  options: {
    scheduled: { type: 'string', default: '100000' },
    lead: { type: 'string', default: '75' },
    spread: { type: 'string', default: '5' },
    sample: { type: 'string', default: '500' },
    /** Batch requests in flight at once while submitting. */
    concurrency: { type: 'string', default: '4' },
    /** Write a CPU profile of Gatepost (node --cpu-prof) into this directory. */
    profile: { type: 'string' },
  },
});
const N = Number(flags.scheduled);
const LEAD_MS = Number(flags.lead) * 1000;
const SPREAD_MS = Number(flags.spread) * 1000;
const SAMPLE = Math.min(N, Number(flags.sample));
const BATCH = 500;

interface BatchAnswer {
  results: ({ index: number; id: string } | { index: number; error: { code: string; message: string } })[];
  accepted: number;
  refused: number;
}

/** Submits messages 0..N-1 in batches of 500; returns the id of each (undefined if refused). */
async function submit(
  gp: BenchGatepost,
  dueAt: (i: number) => number,
): Promise<{ ids: (string | undefined)[]; refusals: string[] }> {
  const ids: (string | undefined)[] = new Array(N);
  const refusals: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const from = next;
      next = Math.min(N, next + BATCH);
      const items = [];
      for (let i = from; i < next; i++) items.push({ ...sendBody(i), send_at: new Date(dueAt(i)).toISOString() });
      const res = await call<BatchAnswer>(gp.url, 'POST', '/v1/emails/batch', gp.key, items);
      if (res.status !== 200) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
      for (const r of res.body.results) {
        if ('id' in r) ids[from + r.index] = r.id;
        else refusals.push(`${r.error.code}: ${r.error.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Number(flags.concurrency) }, worker));
  return { ids, refusals };
}

/** Polls the sample until each message has its message.queued event; returns lateness (ms) of each. */
async function lateness(
  gp: BenchGatepost,
  sample: string[],
  timeoutMs: number,
): Promise<{ late: number[]; lastQueuedAt: number }> {
  const late = new Map<string, number>();
  let lastQueuedAt = 0;
  const until = Date.now() + timeoutMs;
  while (late.size < sample.length && Date.now() < until) {
    const waiting = sample.filter((id) => !late.has(id));
    for (let i = 0; i < waiting.length; i += 50) {
      await Promise.all(
        waiting.slice(i, i + 50).map(async (id) => {
          const m = await call(gp.url, 'GET', `/v1/messages/${id}`, gp.key);
          const queued = (m.body?.events as { type: string; created_at: string }[] | undefined)?.find(
            (e) => e.type === 'message.queued',
          );
          if (!queued) return;
          const at = Date.parse(queued.created_at);
          late.set(id, at - Date.parse(m.body.send_at as string));
          lastQueuedAt = Math.max(lastQueuedAt, at);
        }),
      );
    }
    if (late.size < sample.length) await sleep(1000);
  }
  return { late: [...late.values()].sort((a, b) => a - b), lastQueuedAt };
}

async function main() {
  console.log(
    `bench:scheduled: ${fmt(N)} messages, due ${LEAD_MS / 1000}–${(LEAD_MS + SPREAD_MS) / 1000} s after submission starts; ` +
      `Gatepost at ${gatepostRevision()}\n`,
  );
  const gp = await startGatepost(profileArgs(flags.profile));
  try {
    const busy = await waitForQuiet();
    if (busy >= 15) console.log(`note: the machine was ${fmt(busy)}% busy (of one core) with other work before submitting`);
    const memory: [string, number][] = [['before submitting', rssMiB(gp.pid)]];

    const cpu = cpuSnapshot([gp.pid]);
    const t0 = Date.now();
    const dueAt = (i: number) => t0 + LEAD_MS + Math.floor((i * SPREAD_MS) / N);
    const { ids, refusals } = await submit(gp, dueAt);
    const submitMs = Date.now() - t0;
    const accepted = ids.filter(Boolean).length;
    memory.push(['after submitting (waiting)', rssMiB(gp.pid)]);
    console.log(
      `submitted ${fmt(accepted)} (${refusals.length} refused) in ${(submitMs / 1000).toFixed(1)} s: ${fmt(accepted / (submitMs / 1000))} messages/s`,
    );
    if (refusals.length > 0) console.log(`  first refusal: ${refusals[0]}`);
    if (Date.now() > dueAt(0))
      console.log('  warning: submitting took longer than the lead; the first messages were due before it ended');

    await sleep(dueAt(0) - 3000 - Date.now());
    memory.push(['3 s before the first is due', rssMiB(gp.pid)]);

    await sleep(dueAt(N - 1) + 1000 - Date.now());
    const picks = Array.from({ length: SAMPLE }, (_, k) => Math.floor((k * (N - 1)) / Math.max(1, SAMPLE - 1)));
    const sample = picks.map((i) => ids[i]).filter((id): id is string => id !== undefined);
    const { late, lastQueuedAt } = await lateness(gp, sample, 300_000);
    const { server, other } = cpuSince(cpu);
    memory.push(['after they fire (sample all queued)', rssMiB(gp.pid)]);

    // Then the sandbox delivers each one; wait for the inbox to hold them all.
    const drainStart = Date.now();
    const captured = (await capturedUntil(gp, (inbox) => inbox.size >= accepted, drainStart + 300_000)).size;
    memory.push(['after all are delivered to the sandbox inbox', rssMiB(gp.pid)]);
    memory.push(['peak (VmHWM)', rssMiB(gp.pid, 'VmHWM')]);

    console.log(
      '\nGatepost resident memory (VmRSS)\n' +
        table(
          ['when', 'MiB'],
          memory.map(([when, mib]) => [when, fmt(mib)]),
        ),
    );
    console.log(
      `\nHow late they fire: message.queued created_at − send_at, ${late.length} of ${sample.length} sampled messages fired\n` +
        table(
          ['p50 ms', 'p99 ms', 'max ms', 'last sampled fired after last due'],
          [
            [
              fmt(percentile(late, 50)),
              fmt(percentile(late, 99)),
              fmt(late.at(-1) ?? NaN),
              `${fmt(lastQueuedAt - dueAt(N - 1))} ms`,
            ],
          ],
        ),
    );
    console.log(
      `\nCPU from submitting until the sample fired (% of one core): Gatepost ${fmt(server)}%, everything else but this process ${fmt(other)}%`,
    );
    console.log(
      `sandbox inbox: ${fmt(captured)} of ${fmt(accepted)} accepted messages delivered (${((Date.now() - dueAt(0)) / 1000).toFixed(1)} s after the first was due)`,
    );
  } finally {
    await gp.stop();
  }
}

await main();
process.exit(0);
