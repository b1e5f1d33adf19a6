// One measurement for bench:gate, in a process of its own: starts the Gatepost of the checkout at
// argv[2] on a fresh data directory, in this process, and admits sends through its gate from
// CONNECTIONS concurrent loops for SECONDS after a warm-up, with no HTTP in between. It waits
// until every send is captured, then prints one line of JSON: the sends, the admission rate,
// and the event loop's active time a send, over the load and the capture backlog's drain.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { sendBody } from './common.ts';

const [root, seconds, connections, warmup] = [resolve(process.argv[2]!), ...process.argv.slice(3).map(Number)] as [
  string,
  number,
  number,
  number,
];
const load = (path: string) => import(pathToFileURL(join(root, path)).href);
const { startGatepost } = await load('app/gatepost.ts');
const { loadConfig } = await load('config/config.ts');
const { createGate } = await load('gate/gate.ts');
const { KeyRing } = await load('tenancy/keys.ts');

const dir = mkdtempSync(join(tmpdir(), 'gatepost-bench-gate-'));
const print = console.log;
console.log = () => {}; // the first start's keys and addresses
const gp = await startGatepost(
  loadConfig({ GATEPOST_DATA_DIR: dir, PORT: '0', GATEPOST_SMTP_PORT: '0', GATEPOST_INBOUND_PORT: '0' }),
);
console.log = print;
const gate = createGate({ invoker: gp.runtime, catalog: gp.catalog, senders: null });
const sender = await new KeyRing(gp.catalog).resolve(gp.firstStartKeys.sandbox);

/**
 * Nanoseconds the event loop's thread has run on a CPU (Linux schedstat): unlike the event loop's
 * active time, it leaves out the time the thread was ready but waited for a CPU that other
 * threads or processes held, which on a busy 2-core machine is the larger part of the noise.
 */
const loopThreadRunNs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);

let n = 0;
async function run(forSeconds: number) {
  const until = performance.now() + forSeconds * 1000;
  const elu = performance.eventLoopUtilization();
  const [ranBefore, cpuBefore] = [loopThreadRunNs(), process.cpuUsage()];
  const started = performance.now();
  const before = n;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) await gate.admit({ sender, ingress: 'api', draft: sendBody(n++) });
    }),
  );
  const loadMs = performance.now() - started;
  while (gp.runtime.stats().outbox > 0) await new Promise((r) => setTimeout(r, 5));
  const sends = n - before;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    sends,
    admittedPerSecond: (sends / loadMs) * 1000,
    loopUsPerSend: (performance.eventLoopUtilization(elu).active * 1000) / sends,
    loopCpuUsPerSend: (loopThreadRunNs() - ranBefore) / 1000 / sends,
    processCpuUsPerSend: (cpu.user + cpu.system) / sends,
    drainSeconds: (performance.now() - started - loadMs) / 1000,
  };
}

await run(warmup);
print(JSON.stringify(await run(seconds)));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
// Not awaited: the result is out, and an older checkout's stop may not return (see 68a7555).
void gp.stop().then(() => process.exit(0));
