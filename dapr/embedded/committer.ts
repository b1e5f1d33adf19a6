// Group commit on a writer thread. The writes of every turn that ends while the writer is busy
// go to disk together, in one transaction and one fsync, on the second core; the event loop
// never waits for the disk. Groups are committed in the order they were enqueued, so a turn may
// read state that an earlier turn wrote but has not yet made durable: if the process dies, the
// earlier turn is lost too, and neither answer has gone out (answers wait for `durable`).
import { Worker } from 'node:worker_threads';
import type { Write } from './committer.apply.ts';

export type { Write } from './committer.apply.ts';

interface Pending {
  seq: number;
  writes: Write[];
  afterCommit?: () => void;
}

export class GroupCommitter {
  private queue: Pending[] = [];
  private inFlight: Pending[] | null = null;
  private lastEnqueued = 0;
  private lastDurable = 0;
  private waiters: { seq: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private sendScheduled = false;
  private failure: unknown = null;
  private idle: (() => void)[] = [];
  private groups = 0;
  private readonly worker: Worker;
  /** Resolves once the writer thread has opened the store. */
  readonly ready: Promise<void>;

  constructor(
    file: string,
    private readonly onFatal: (error: unknown) => void,
  ) {
    this.worker = new Worker(new URL('./committer.worker.boot.mjs', import.meta.url), { workerData: { file } });
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', () => resolve());
      this.worker.once('error', reject);
    });
    this.worker.on('message', (m: { seq: number; error?: string } | { ready: true } | { closed: true }) => {
      if ('seq' in m) this.committed(m.seq, m.error);
    });
    this.worker.on('error', (error) => this.fail(error));
  }

  get durableHead(): number {
    return this.lastDurable;
  }

  /** How many groups have been committed: for tests and benchmarks. */
  get committedGroups(): number {
    return this.groups;
  }

  enqueue(writes: Write[], afterCommit?: () => void): number {
    if (this.failure) throw this.failure;
    const seq = ++this.lastEnqueued;
    this.queue.push({ seq, writes, afterCommit });
    if (!this.sendScheduled && !this.inFlight) {
      // Let the turns of this tick join the group before it leaves.
      this.sendScheduled = true;
      setImmediate(() => {
        this.sendScheduled = false;
        this.send();
      });
    }
    return seq;
  }

  durable(seq: number = this.lastEnqueued): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (seq <= this.lastDurable) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ seq, resolve, reject }));
  }

  /** Commits what is queued, waits for it, and stops the writer thread. */
  async close(): Promise<void> {
    if (!this.failure && (this.inFlight || this.queue.length > 0)) {
      this.send();
      await new Promise<void>((resolve) => this.idle.push(resolve));
    }
    const closed = new Promise<void>((resolve) => this.worker.once('message', () => resolve()));
    this.worker.postMessage('close');
    await closed;
    await this.worker.terminate();
  }

  private send(): void {
    if (this.inFlight || this.queue.length === 0 || this.failure) return;
    const group = this.queue;
    this.queue = [];
    this.inFlight = group;
    this.worker.postMessage({ seq: group[group.length - 1]!.seq, writes: group.flatMap((p) => p.writes) });
  }

  private committed(seq: number, error: string | undefined): void {
    if (error) return this.fail(new Error(`the actor store could not commit: ${error}`));
    const group = this.inFlight!;
    this.inFlight = null;
    this.groups++;
    this.lastDurable = seq;
    for (const p of group) p.afterCommit?.();
    let done = 0;
    while (done < this.waiters.length && this.waiters[done]!.seq <= seq) done++;
    for (const w of this.waiters.splice(0, done)) w.resolve();
    // What queued up while this group was on its way to disk leaves now, as one group.
    if (this.queue.length > 0) this.send();
    else for (const resolve of this.idle.splice(0)) resolve();
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    // The in-memory actor state already reflects these writes; carrying on would let it drift
    // from disk. A failed commit (disk full, I/O error) stops the runtime, as a database would.
    this.failure = error;
    for (const w of this.waiters) w.reject(error);
    this.waiters = [];
    for (const resolve of this.idle.splice(0)) resolve();
    this.onFatal(error);
  }
}
