// Sandbox captures are written on a thread of their own. A capture is durable (fsync) before
// putCapture resolves, as before; what moves is the commit's fsync, which on the event loop took
// about a fifth of its time under load (bench:ingress profile). Captures that arrive while a
// group is being written wait and go together as the next group: one fsync for all of them.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../lib/worker.ts';

/** One row of the captures table: tenant_id, message_id, captured_at, body (JSON). */
export type CaptureRow = [string, string, string, string];

interface Waiting {
  row: CaptureRow;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class CaptureWriter {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private queue: Waiting[] = [];
  private inFlight: Waiting[] | null = null;
  private sendScheduled = false;
  private idle: (() => void)[] = [];

  constructor(private readonly file: string) {}

  put(row: CaptureRow): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (!this.sendScheduled && !this.inFlight) {
        // Let the captures of this tick join the group before it leaves.
        this.sendScheduled = true;
        setImmediate(() => {
          this.sendScheduled = false;
          void this.send();
        });
      }
    });
  }

  /** Writes what is queued, then stops the thread. */
  async close(): Promise<void> {
    if (this.inFlight || this.queue.length > 0 || this.sendScheduled) {
      await new Promise<void>((resolve) => this.idle.push(resolve));
    }
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    if (!worker) return;
    const closed = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Kept alive until it has closed its connection: unreferenced, a process with nothing else
    // left to do (a drain at its end) would exit before the thread had, and close never return.
    worker.ref();
    worker.postMessage('close');
    await closed;
  }

  /** Started on the first capture: most catalogs (tests, live keys) never write one. */
  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const worker = startWorker(import.meta.url, 'captures.worker', { workerData: { file: this.file } });
    // The thread keeps the process alive only while it has a group to write (see send, written).
    worker.unref();
    this.worker = worker;
    this.ready = new Promise((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    worker.on('message', (m: { done: true; error?: string } | { ready: true }) => {
      if ('done' in m) this.written(m.error === undefined ? null : new Error(`the capture inbox could not commit: ${m.error}`));
    });
    worker.on('error', (error) => this.written(error));
    return this.ready;
  }

  private async send(): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return this.settle();
    const group = this.queue;
    this.queue = [];
    this.inFlight = group;
    try {
      await this.start();
    } catch (error) {
      return this.written(error);
    }
    this.worker!.ref();
    this.worker!.postMessage(group.map((w) => w.row));
  }

  private written(error: unknown): void {
    const group = this.inFlight;
    if (!group) return;
    this.inFlight = null;
    this.worker?.unref();
    for (const w of group) {
      if (error) w.reject(error);
      else w.resolve();
    }
    if (error) {
      // A thread that failed is replaced at the next capture.
      void this.worker?.terminate();
      this.worker = null;
      this.ready = null;
    }
    void this.send();
  }

  private settle(): void {
    if (this.inFlight || this.queue.length > 0 || this.sendScheduled) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
