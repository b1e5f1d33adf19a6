// A worker thread that runs jobs and answers each by its id: how Gatepost moves work that would
// hold the event loop (parsing mail, checking signatures) to another core. The thread starts with
// the first job, and keeps the process alive only while a job is out. Should it fail or stop,
// every job it held is refused with the reason, and the next job starts a new thread.
import { parentPort, type Transferable, type Worker, type WorkerOptions } from 'node:worker_threads';
import { lowerThreadPriority, startWorker } from './worker.ts';

type Answer<A> = { id: number; ok: A } | { id: number; failed: string };

export interface JobThread<J, A> {
  /** `transfer`: buffers of `job` handed over to the thread rather than copied. */
  run(job: J, transfer?: Transferable[]): Promise<A>;
  /** Stops the thread; jobs still out are refused. */
  close(): Promise<void>;
}

/** The thread of module `name` beside `caller` (its `import.meta.url`), which calls `serveJobs`. */
export function jobThread<J, A>(caller: string, name: string, options?: WorkerOptions): JobThread<J, A> {
  let worker: Worker | null = null;
  let nextId = 0;
  const pending = new Map<number, { resolve: (answer: A) => void; reject: (error: Error) => void }>();

  const settle = (answer: Answer<A>) => {
    const waiter = pending.get(answer.id);
    if (!waiter) return;
    pending.delete(answer.id);
    if ('ok' in answer) waiter.resolve(answer.ok);
    else waiter.reject(new Error(answer.failed));
    if (pending.size === 0) worker?.unref();
  };
  const refuseAll = (reason: string) => {
    for (const id of [...pending.keys()]) settle({ id, failed: reason });
  };

  const start = (): Worker => {
    const w = startWorker(caller, name, options);
    const lost = (reason: string) => {
      if (w !== worker) return;
      worker = null;
      refuseAll(reason);
    };
    w.on('message', settle);
    w.on('error', (error) => lost(`the ${name} thread failed: ${error.message}`));
    w.on('exit', () => lost(`the ${name} thread stopped`));
    return w;
  };

  return {
    run(job, transfer) {
      const w = (worker ??= start());
      const id = ++nextId;
      return new Promise<A>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.ref();
        try {
          w.postMessage({ id, job }, transfer);
        } catch (error) {
          // A job that cannot be cloned: only a bug gets here.
          settle({ id, failed: (error as Error).message });
        }
      });
    },
    async close() {
      const w = worker;
      worker = null;
      if (w) {
        // Referenced until it has stopped, as the group committer's threads are (committer.ts, close).
        w.ref();
        await w.terminate();
      }
      refuseAll(`the ${name} thread was closed`);
    },
  };
}

/**
 * In the thread: answers each job with what `work` makes of it, or with why it failed.
 * `transferOf` names buffers of an answer to hand over rather than copy.
 */
export function serveJobs<J, A>(work: (job: J) => Promise<A>, transferOf: (answer: A) => Transferable[] = () => []): void {
  const port = parentPort!;
  // The event loop hands this thread its jobs: it must not take the core from it (lib/worker.ts).
  lowerThreadPriority();
  port.on('message', ({ id, job }: { id: number; job: J }) => {
    work(job).then(
      (ok) => port.postMessage({ id, ok } satisfies Answer<A>, transferOf(ok)),
      (error: unknown) => port.postMessage({ id, failed: String((error as Error)?.stack ?? error) } satisfies Answer<A>),
    );
  });
}
