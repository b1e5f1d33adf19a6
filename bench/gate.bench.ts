// npm run bench:gate [-- --duration 4 --connections 64 --warmup 2 --rounds 5 --baseline DIR]
// The event loop's cost of a send without HTTP: sends admitted through the gate, in process, from
// 64 concurrent loops, then captured in the sandbox (bench/gate.child.ts). Prints the event loop's
// active microseconds a send, over the load and the capture backlog's drain, and the admission
// rate. Less noisy than bench:send, since neither the HTTP layer nor a load generator shares the
// measurement; meant for comparing changes. With --baseline DIR (another checkout, a git worktree
// of an earlier commit, say, sharing this one's node_modules), every round measures both, in
// alternating order, and prints the ratios.
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, gatepostRevision, inTurns, median, ROOT, table } from './common.ts';
import { NODE_ARGS } from '../app/launch.ts';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '4' },
    connections: { type: 'string', default: '64' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    baseline: { type: 'string' },
  },
});

interface Result {
  sends: number;
  admittedPerSecond: number;
  loopUsPerSend: number;
  loopCpuUsPerSend: number;
  processCpuUsPerSend: number;
  drainSeconds: number;
}

function measure(root: string): Result {
  const args = [root, flags.duration!, flags.connections!, flags.warmup!];
  const out = execFileSync(process.execPath, [...NODE_ARGS, 'bench/gate.child.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Result;
}

const checkouts = [{ name: `this checkout (${gatepostRevision()})`, root: ROOT }];
if (flags.baseline) {
  const root = resolve(flags.baseline);
  const revision = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  checkouts.push({ name: `baseline (${revision})`, root });
}
const rounds = Number(flags.rounds);
console.log(
  `bench:gate on ${cpus().length} cores, Node ${process.version}: ${flags.connections} concurrent sends, ` +
    `${flags.duration} s after ${flags.warmup} s of warm-up, ${rounds} rounds\n`,
);

const byRound = await inTurns(
  rounds,
  checkouts.map((c) => () => measure(c.root)),
);
const results = checkouts.map((_, i) => byRound.map((round) => round[i]!));

console.log(
  table(
    ['checkout', 'round', 'sends', 'admitted/s', 'event loop us/send', 'its CPU us/send', 'process CPU us/send', 'drain s'],
    checkouts.flatMap((c, i) =>
      results[i]!.map((r, round) => [
        c.name,
        String(round + 1),
        fmt(r.sends),
        fmt(r.admittedPerSecond),
        fmt(r.loopUsPerSend, 1),
        fmt(r.loopCpuUsPerSend, 1),
        fmt(r.processCpuUsPerSend, 1),
        fmt(r.drainSeconds, 1),
      ]),
    ),
  ),
);
console.log();
checkouts.forEach((c, i) => {
  const of = (f: (r: Result) => number) => fmt(median(results[i]!.map(f)), 1);
  console.log(
    `${c.name}: medians a send: event loop ${of((r) => r.loopUsPerSend)} us, its CPU ${of((r) => r.loopCpuUsPerSend)} us, ` +
      `process CPU ${of((r) => r.processCpuUsPerSend)} us; ${of((r) => r.admittedPerSecond)} admitted/s`,
  );
});
if (checkouts.length === 2) {
  const ratio = (of: (r: Result) => number) => results[0]!.map((r, round) => of(r) / of(results[1]![round]!));
  const show = (label: string, of: (r: Result) => number) => {
    const r = ratio(of);
    console.log(`${label}, this / baseline, by round: ${r.map((x) => fmt(x, 3)).join(', ')}; median ${fmt(median(r), 3)}`);
  };
  show('event loop a send', (r) => r.loopUsPerSend);
  show("event loop's CPU a send", (r) => r.loopCpuUsPerSend);
  show('process CPU a send', (r) => r.processCpuUsPerSend);
  show('admitted/s', (r) => r.admittedPerSecond);
}
