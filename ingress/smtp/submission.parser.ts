// Parsing a submitted message into drafts, on a thread of its own. mailparser is the one parser of
// every submission (STYLE 15), and it works through streams and setImmediate; on the event loop,
// between the other sessions' work, one 1 KB message took about 5 ms from DATA to drafts and 12 %
// of the loop's time (bench:ingress profile), time HTTP requests and deliveries would wait for.
// On its thread it runs the same code (submission.drafts.ts) and the event loop only posts and
// receives.
import { jobThread } from '../../lib/thread.ts';
import { GatepostError, type CodedErrorBody } from '../../errors/errors.catalog.ts';
import { parseMessage, submissionItems, type Envelope, type Submission } from './submission.drafts.ts';

export interface SubmissionParser {
  parse(raw: Buffer, envelope: Envelope): Promise<Submission>;
  close(): Promise<void>;
}

export interface ParseJob {
  raw: Uint8Array;
  envelope: Envelope;
}

/** What the thread makes of one message: the drafts, or a refusal (a failure, a parser bug, rejects). */
export type ParseAnswer = { ok: Submission } | { refused: CodedErrorBody };

/** On the calling thread: for tests and tools that parse a message or two. */
export const inlineParser: SubmissionParser = {
  async parse(raw, envelope) {
    return submissionItems(await parseMessage(raw), envelope);
  },
  async close() {},
};

/** One thread for every session. */
export function workerParser(): SubmissionParser {
  const thread = jobThread<ParseJob, ParseAnswer>(import.meta.url, 'submission.parser.worker');
  return {
    async parse(raw, envelope) {
      // A copy of exactly the message: a small Buffer is a view of a shared pool, which would be
      // cloned whole; the copy's memory is handed over, not cloned.
      const bytes = new Uint8Array(raw);
      const answer = await thread.run({ raw: bytes, envelope }, [bytes.buffer]);
      if ('refused' in answer) throw GatepostError.fromBody(answer.refused);
      return answer.ok;
    },
    close: () => thread.close(),
  };
}
