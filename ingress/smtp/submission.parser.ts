// Parsing a submitted message into drafts, on a thread of its own. mailparser is the one parser of
// every submission (STYLE 15), and it works through streams and setImmediate; on the event loop,
// between the other sessions' work, one 1 KB message took about 5 ms from DATA to drafts and 12 %
// of the loop's time (bench:ingress profile), time HTTP requests and deliveries would wait for.
// On its thread it runs the same code (submission.drafts.ts) and the event loop only posts and
// receives.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../lib/worker.ts';
import { GatepostError, type CodedErrorBody } from '../../errors/errors.catalog.ts';
import { parseMessage, submissionItems, type Envelope, type Submission } from './submission.drafts.ts';

export interface SubmissionParser {
  parse(raw: Buffer, envelope: Envelope): Promise<Submission>;
  close(): Promise<void>;
}

/** What the thread answers for one message: the drafts, a refusal, or a failure (a parser bug). */
export type ParseAnswer =
  { id: number; ok: Submission } | { id: number; refused: CodedErrorBody } | { id: number; failed: string };

/** On the calling thread: for tests and tools that parse a message or two. */
export const inlineParser: SubmissionParser = {
  async parse(raw, envelope) {
    return submissionItems(await parseMessage(raw), envelope);
  },
  async close() {},
};

/** One thread for every session; it starts with the first message and keeps the process alive only while it parses. */
export function workerParser(): SubmissionParser {
  let worker: Worker | null = null;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (s: Submission) => void; reject: (e: unknown) => void }>();

  const fail = (error: unknown) => {
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
    worker = null;
  };

  const start = (): Worker => {
    const w = startWorker(import.meta.url, 'submission.parser.worker');
    w.unref();
    w.on('message', (answer: ParseAnswer) => {
      const pending = waiting.get(answer.id);
      if (!pending) return;
      waiting.delete(answer.id);
      if (waiting.size === 0) w.unref();
      if ('ok' in answer) pending.resolve(answer.ok);
      else if ('refused' in answer) pending.reject(GatepostError.fromBody(answer.refused));
      else pending.reject(new Error(answer.failed));
    });
    w.on('error', fail);
    w.on('exit', () => {
      if (worker === w) fail(new Error('the SMTP parser thread stopped'));
    });
    return w;
  };

  return {
    parse(raw, envelope) {
      worker ??= start();
      const id = ++nextId;
      // A copy of exactly the message: a small Buffer is a view of a shared pool, which would be
      // cloned whole; the copy's memory is handed over, not cloned.
      const bytes = new Uint8Array(raw);
      const answer = new Promise<Submission>((resolve, reject) => waiting.set(id, { resolve, reject }));
      worker.ref();
      worker.postMessage({ id, raw: bytes, envelope }, [bytes.buffer]);
      return answer;
    },
    async close() {
      const w = worker;
      worker = null;
      if (w) {
        // Referenced until it has stopped, as the group committer's threads are (lib/committer.ts, close).
        w.ref();
        await w.terminate();
      }
      fail(new Error('the SMTP parser was closed'));
    },
  };
}
