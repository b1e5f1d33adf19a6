// Rendering off the event loop. Handlebars runs synchronously, so a costly template on the main
// thread stopped HTTP, SMTP and delivery while it ran (issue 20, item 3: 11.7 s for one request).
// Here the event loop only posts a job and receives its answer. Jobs go to one thread, one at a
// time; a job past its deadline, or one that exhausts the thread's heap, has its thread stopped
// and replaced, and the jobs behind it go on on the new thread.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../lib/worker.ts';
import { RENDER_HEAP_MB, type RenderLimit, type RenderLimits } from './render.limits.ts';

export interface RenderJob {
  id: number;
  source: string;
  data: Record<string, unknown>;
  kind: 'html' | 'text';
  /** The limits of the gate that asked: each job carries its own, the thread serves every gate. */
  limits: RenderLimits;
}

/** The thread's answer: the output, a limit it went over, or Handlebars' error message. */
export type RenderAnswer = { id: number; ok: string } | { id: number; limit: RenderLimit } | { id: number; failed: string };

export type RenderOutcome = { ok: string } | { limit: RenderLimit } | { failed: string };

interface Pending {
  job: RenderJob;
  settle: (outcome: RenderOutcome) => void;
}

let worker: Worker | null = null;
/** The thread has loaded (tsx, Handlebars): a deadline counts the render, not the thread's start. */
let ready = false;
let running: (Pending & { timer: NodeJS.Timeout }) | null = null;
const queue: Pending[] = [];
let nextId = 0;

/** Renders on the render thread; the outcome says how it ended, a thread failure included. */
export function renderOnThread(
  source: string,
  data: Record<string, unknown>,
  kind: 'html' | 'text',
  limits: RenderLimits,
): Promise<RenderOutcome> {
  return new Promise((settle) => {
    queue.push({ job: { id: ++nextId, source, data, kind, limits }, settle });
    if (!running) runNext();
  });
}

function runNext(): void {
  const next = queue.shift();
  if (!next) {
    // Idle: the thread stays for the next render but does not keep the process alive.
    worker?.unref();
    return;
  }
  const w = (worker ??= start());
  w.ref();
  if (!ready) {
    queue.unshift(next);
    return; // runNext again when the thread says it is ready
  }
  running = { ...next, timer: setTimeout(() => stop('time'), next.job.limits.timeoutMs) };
  try {
    w.postMessage(next.job);
  } catch (error) {
    // Data that cannot be cloned (it came from JSON, so only a bug gets here).
    finish({ failed: (error as Error).message });
  }
}

function finish(outcome: RenderOutcome): void {
  const done = running;
  if (!done) return;
  running = null;
  clearTimeout(done.timer);
  done.settle(outcome);
  runNext();
}

/** Ends the running job over `limit`, with the thread that ran it. */
function stop(limit: RenderLimit): void {
  const w = worker;
  worker = null;
  ready = false;
  void w?.terminate();
  finish({ limit });
}

/** The thread failed by itself (a bug, or it could not start): what it ran, or waited for it, fails. */
function lost(reason: string): void {
  worker = null;
  ready = false;
  if (running) return finish({ failed: reason });
  for (const waiting of queue.splice(0)) waiting.settle({ failed: reason });
}

function start(): Worker {
  const w = startWorker(import.meta.url, 'render.worker', {
    resourceLimits: { maxOldGenerationSizeMb: RENDER_HEAP_MB },
  });
  ready = false;
  w.on('message', (answer: RenderAnswer | 'ready') => {
    if (w !== worker) return;
    if (answer === 'ready') {
      ready = true;
      if (!running) runNext();
      return;
    }
    if (running?.job.id !== answer.id) return;
    const { id: _id, ...outcome } = answer;
    finish(outcome);
  });
  w.on('error', (error: Error & { code?: string }) => {
    if (w !== worker) return;
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') stop('memory');
    else lost(`the render thread failed: ${error.message}`);
  });
  w.on('exit', () => {
    if (w === worker) lost('the render thread stopped');
  });
  return w;
}
