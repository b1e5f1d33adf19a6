// The bytes a live message leaves as, made off the event loop: the MIME build (and the text part
// generated from the html) and the two DKIM signatures were about half of the event loop's work
// a delivered message in bench:deliver, and this thread runs them on another core. Jobs go to one
// thread (lib/thread.ts), answered as each is made. Should the thread fail, what it had is
// refused with the reason, and the next job starts a new one.
import { jobThread } from '../lib/thread.ts';
import type { RenderedContent } from './content.ts';
import type { DkimSigner } from './dkim.ts';

export interface OutgoingJob {
  content: RenderedContent;
  messageId: string;
  /** The message's Date, ms. */
  date: number;
  /** Null: sent unsigned (the From domain is not a verified domain of the tenant). KeyObjects clone to the thread. */
  signer: DkimSigner | null;
}

export type OutgoingAnswer =
  { raw: Uint8Array; dkim: { d: string; s: string[] } | null } | { failed: string; stage: 'compose' | 'sign' };

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

const thread = jobThread<OutgoingJob, OutgoingAnswer>(import.meta.url, 'outgoing.worker');

/** Composes `content` to MIME with its Message-ID and Date, and signs it with `signer` when there is one. */
export async function outgoingBytes(
  content: RenderedContent,
  { messageId, date }: { messageId: string; date: Date },
  signer: DkimSigner | null,
): Promise<Outgoing> {
  let answer: OutgoingAnswer;
  try {
    answer = await thread.run({ content, messageId, date: date.getTime(), signer });
  } catch (error) {
    // The thread failed or stopped, or the job could not be cloned: nothing was made.
    throw new OutgoingFailed('compose', (error as Error).message);
  }
  if ('failed' in answer) throw new OutgoingFailed(answer.stage, answer.failed);
  return { raw: Buffer.from(answer.raw.buffer, answer.raw.byteOffset, answer.raw.byteLength), dkim: answer.dkim };
}
