// The bytes a live message leaves as, made off the event loop: the MIME build (and the text part
// generated from the html) and the two DKIM signatures were about half of the event loop's work
// a delivered message in bench:deliver, and this thread runs them on another core. Jobs go to one
// thread, answered as each is made. Should the thread fail, what it
// had is refused with the reason, and the next job starts a new one.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../lib/worker.ts';
import type { RenderedContent } from './content.ts';
import type { DkimSigner } from './dkim.ts';

export interface OutgoingJob {
  id: number;
  content: RenderedContent;
  messageId: string;
  /** The message's Date, ms. */
  date: number;
  /** Null: sent unsigned (the From domain is not a verified domain of the tenant). KeyObjects clone to the thread. */
  signer: DkimSigner | null;
}

export type OutgoingAnswer =
  | { id: number; raw: Uint8Array; dkim: { d: string; s: string[] } | null }
  | { id: number; failed: string; stage: 'compose' | 'sign' };

/** The bytes to hand over, and the DKIM signature's domain and selectors (null: unsigned). */
export interface Outgoing {
  raw: Buffer;
  dkim: { d: string; s: string[] } | null;
}

/** Composing or signing failed: which, and why (a signing failure defers the message; it is never sent unsigned). */
export class OutgoingFailed extends Error {
  constructor(
    readonly stage: 'compose' | 'sign',
    message: string,
  ) {
    super(message);
  }
}

let worker: Worker | null = null;
const pending = new Map<number, { resolve: (o: Outgoing) => void; reject: (e: Error) => void }>();
let nextId = 0;

/** Composes `content` to MIME with its Message-ID and Date, and signs it with `signer` when there is one. */
export function outgoingBytes(
  content: RenderedContent,
  { messageId, date }: { messageId: string; date: Date },
  signer: DkimSigner | null,
): Promise<Outgoing> {
  return new Promise((resolve, reject) => {
    const id = ++nextId;
    const job: OutgoingJob = { id, content, messageId, date: date.getTime(), signer };
    const w = (worker ??= start());
    pending.set(id, { resolve, reject });
    w.ref();
    try {
      w.postMessage(job);
    } catch (error) {
      // Content that cannot be cloned (it came from JSON, so only a bug gets here).
      settle(id, { id, failed: (error as Error).message, stage: 'compose' });
    }
  });
}

function settle(id: number, answer: OutgoingAnswer): void {
  const waiter = pending.get(id);
  if (!waiter) return;
  pending.delete(id);
  if ('failed' in answer) waiter.reject(new OutgoingFailed(answer.stage, answer.failed));
  else waiter.resolve({ raw: Buffer.from(answer.raw.buffer, answer.raw.byteOffset, answer.raw.byteLength), dkim: answer.dkim });
  // Idle: the thread stays for the next message but does not keep the process alive.
  if (pending.size === 0) worker?.unref();
}

function start(): Worker {
  const w = startWorker(import.meta.url, 'outgoing.worker');
  const lost = (reason: string) => {
    if (w !== worker) return;
    worker = null;
    for (const id of [...pending.keys()]) settle(id, { id, failed: reason, stage: 'compose' });
  };
  w.on('message', (answer: OutgoingAnswer) => settle(answer.id, answer));
  w.on('error', (error) => lost(`the outgoing thread failed: ${error.message}`));
  w.on('exit', () => lost('the outgoing thread stopped'));
  return w;
}
