// Group commit on a writer thread, for any SQLite file: Gatepost's one writer (the actor store's
// turns, the capture inbox's captures). The writes of each tick are posted to the writer at once
// (a tick with many, every `postEvery` enqueues); the writer commits everything that reached it
// while it was busy as one transaction and one fsync, on the second core, and starts the next as
// soon as one is done, without waiting for the event loop to answer. The event loop never waits
// for the disk. Writes are committed in the order they were enqueued, so a turn may read state
// that an earlier turn wrote but has not yet made durable: if the process dies, the earlier turn
// is lost too, and neither answer has gone out (answers wait for `durable`).
//
// What a write is belongs to the caller: the writer thread loads the caller's applier module
// (`applier`, its URL), whose `applier(db)` answers how to apply one group's writes, flat, in one
// transaction, and what to do once no writes come (`whenIdle`).
import type { Worker } from 'node:worker_threads';
import type { Db } from './sqlite.ts';
import { Fifo } from './fifo.ts';
import { startWorker } from './worker.ts';

/** One group's writes, as the writer thread is posted them: a flat array (cheap to clone) its applier reads. */
export type EncodedWrites = (string | number | null | Uint8Array)[];

/** What an applier module's `applier(db)` answers, on the writer thread. */
export interface StoreWriter {
  /** Applies one group's writes; the writer runs it inside the group's transaction. */
  apply(writes: EncodedWrites): void;
  /**
   * Work kept off the commits, done a part at a time (each part its own transaction) once the
   * writer has had nothing to commit for IDLE_MS (committer.worker.ts), stopped by the next
   * write; answers whether more is left.
   */
  whenIdle?(): boolean;
}

/** What an applier module exports. */
export type Applier = (db: Db) => StoreWriter;

interface Pending {
  seq: number;
  afterCommit?: () => void;
}

/** What the writer thread is posted: the writes of enqueued turns up to `seq`. */
export interface Posted {
  seq: number;
  writes: EncodedWrites;
}

/** What it answers, once per transaction: everything posted up to `seq` is durable (or failed). */
export interface Committed {
  seq: number;
  error?: string;
}

export interface GroupCommitterOptions {
  /** A log longer than this many pages is started again from its beginning (checkpointer.worker.ts). */
  walRestartFrames?: number;
  /**
   * A tick that enqueues this many turns posts them at once, and goes on. Under load a tick runs
   * a wave of requests, and every answer waits for the commit: posted only at the tick's end, the
   * whole wave waited for the writer to start, while the writer sat idle. Posted in parts, the
   * writer commits the first while the event loop runs the rest (bench:gate at 16: 1.30 times the
   * admissions a second, for 1.13 times the CPU; bench:send: see bench/RESULTS.md).
   */
  postEvery?: number;
}

export class GroupCommitter {
  /** Enqueued in this tick, not yet posted, and their writes. */
  private queue: Pending[] = [];
  private queuedWrites: EncodedWrites = [];
  /** Posted to the writer, not yet durable, in order. */
  private readonly posted = new Fifo<Pending>();
  private lastEnqueued = 0;
  private lastDurable = 0;
  private waiters: { seq: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private postScheduled = false;
  private failure: unknown = null;
  private idle: (() => void)[] = [];
  private groups = 0;
  private readonly worker: Worker;
  private readonly checkpointer: Worker;
  private readonly postEvery: number;
  /** Resolves once the writer and checkpointer threads have opened the store. */
  readonly ready: Promise<void>;

  /**
   * `applier`: the URL of the module the writer thread applies writes with (its export
   * `applier`, an Applier); `onFatal`: a commit failed, and every later enqueue throws.
   */
  constructor(
    private readonly file: string,
    applier: URL,
    private readonly onFatal: (error: unknown) => void,
    { walRestartFrames = 4096, postEvery = 16 }: GroupCommitterOptions = {},
  ) {
    this.postEvery = postEvery;
    // The checkpointer asks, the writer restarts the log (checkpointer.worker.ts says why).
    const restartWanted = new Int32Array(new SharedArrayBuffer(4));
    this.worker = startWorker(import.meta.url, 'committer.worker', {
      workerData: { file, applier: applier.href, restartWanted },
    });
    this.checkpointer = startWorker(import.meta.url, 'checkpointer.worker', {
      workerData: { file, restartFrames: walRestartFrames, restartWanted },
    });
    // The threads keep the process alive only while a group is being written (post, committed)
    // and while they close: a store nobody writes to holds no process open.
    this.worker.unref();
    this.checkpointer.unref();
    const opened = (worker: Worker) =>
      new Promise<void>((resolve, reject) => {
        worker.once('message', () => resolve());
        worker.once('error', reject);
      });
    this.ready = Promise.all([opened(this.worker), opened(this.checkpointer)]).then(() => undefined);
    // A thread that cannot open the store also fails the committer (below), which is what a
    // committer nobody awaits `ready` on (the capture inbox) hears of it by.
    this.ready.catch(() => undefined);
    // A failed checkpoint loses nothing (the log keeps every commit), but the log would then grow
    // without end: it stops the runtime, as a failed commit does.
    this.checkpointer.on('error', (error) => this.onFatal(error));
    this.worker.on('message', (m: Committed | { ready: true } | { closed: true }) => {
      if ('seq' in m) this.committed(m);
    });
    this.worker.on('error', (error) => this.fail(error));
  }

  get durableHead(): number {
    return this.lastDurable;
  }

  /** How many transactions the writer has committed: for tests and benchmarks. */
  get committedGroups(): number {
    return this.groups;
  }

  /** Writes, encoded for the applier; answers their sequence number (for `durable`). */
  enqueue(writes: EncodedWrites, afterCommit?: () => void): number {
    if (this.failure) throw this.failure;
    const seq = ++this.lastEnqueued;
    this.queue.push({ seq, afterCommit });
    for (let i = 0; i < writes.length; i++) this.queuedWrites.push(writes[i]!);
    if (this.queue.length >= this.postEvery) {
      this.post();
      return seq;
    }
    if (!this.postScheduled) {
      // Let the turns of this tick go together.
      this.postScheduled = true;
      setImmediate(() => {
        this.postScheduled = false;
        this.post();
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
    this.post();
    if (!this.failure && this.posted.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    for (const worker of [this.checkpointer, this.worker]) {
      worker.ref();
      const closed = new Promise<void>((resolve) => worker.once('message', () => resolve()));
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    }
  }

  private post(): void {
    if (this.queue.length === 0 || this.failure) return;
    const tick = this.queue;
    const writes = this.queuedWrites;
    this.queue = [];
    this.queuedWrites = [];
    if (this.posted.length === 0) this.worker.ref();
    for (const p of tick) this.posted.push(p);
    this.worker.postMessage({ seq: tick[tick.length - 1]!.seq, writes } satisfies Posted);
  }

  private committed({ seq, error }: Committed): void {
    if (error) return this.fail(new Error(`${this.file} could not commit: ${error}`));
    this.groups++;
    this.lastDurable = seq;
    while (this.posted.length > 0 && this.posted.peek()!.seq <= seq) this.posted.shift()!.afterCommit?.();
    let done = 0;
    while (done < this.waiters.length && this.waiters[done]!.seq <= seq) done++;
    for (const w of this.waiters.splice(0, done)) w.resolve();
    if (this.posted.length === 0) {
      this.worker.unref();
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    // The in-memory actor state already reflects these writes; carrying on would let it drift
    // from disk. A failed commit (disk full, I/O error) stops the runtime, as a database would.
    this.failure = error;
    this.worker.unref();
    for (const w of this.waiters) w.reject(error);
    this.waiters = [];
    for (const resolve of this.idle.splice(0)) resolve();
    this.onFatal(error);
  }
}
