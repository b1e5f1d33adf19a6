import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The module `name` (no extension) in the folder of `caller` (the caller's `import.meta.url`):
 * compiled (`node dist/main.js`), the caller is .js and so is the module; from the TypeScript
 * sources (vitest, `--import tsx`), both are .ts.
 */
export function moduleBeside(caller: string, name: string): URL {
  return new URL(`./${name}.${caller.endsWith('.js') ? 'js' : 'ts'}`, caller);
}

/**
 * Starts the worker thread `name` from the folder of `caller`. From the sources, a thread
 * inherits no loader on Node 20: it registers tsx first, then loads the .ts.
 */
export function startWorker(caller: string, name: string, options?: WorkerOptions): Worker {
  const file = moduleBeside(caller, name);
  if (file.pathname.endsWith('.js')) return new Worker(file, options);
  const boot = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(file.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`), options);
}

/** The niceness of Gatepost's helper threads (0 is the event loop's; 19 the lowest priority). */
const HELPER_NICENESS = 10;

/**
 * Lowers the calling thread's scheduling priority, for helper threads (the writers, the job
 * threads) whose work the event loop hands them. Waking a helper (every post does) let it take the
 * core from the event loop that woke it: on two busy cores, bench:send made 6.9 % more sends a
 * second with the helpers at niceness 10 (10,412 against 9,743/s, four alternating triplets, CPU a
 * send 146 against 156 us; niceness 5: +3.8 %), the same p99 (bench/RESULTS.md, twenty-second
 * pass). Linux only (a thread's id is its /proc/thread-self); elsewhere nothing changes.
 */
export function lowerThreadPriority(): void {
  try {
    const tid = threadId();
    // Only ever lower: a process already started below that keeps its own.
    setPriority(tid, Math.max(getPriority(tid), HELPER_NICENESS));
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

/** The calling thread's id as the kernel knows it (Linux: /proc/thread-self is `pid/task/tid`); throws elsewhere. */
export function threadId(): number {
  return Number(readlinkSync('/proc/thread-self').split('/').pop());
}
