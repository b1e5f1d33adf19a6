// The outgoing thread (outgoing.thread.ts): composes each message and signs it, answered by id
// (lib/thread.ts). A composing or signing failure is an answer, naming its stage.
import { serveJobs } from '../lib/thread.ts';
import { signDkim } from './dkim.ts';
import { composeRaw } from './mime.ts';
import type { OutgoingAnswer, OutgoingJob } from './outgoing.thread.ts';

serveJobs<OutgoingJob, OutgoingAnswer>(async ({ content, messageId, date, signer }) => {
  let composed: Buffer;
  try {
    composed = await composeRaw(content, { messageId, date: new Date(date) });
  } catch (error) {
    return { failed: String(error), stage: 'compose' };
  }
  if (!signer) return { raw: composed, dkim: null };
  try {
    const { raw, d, s } = signDkim(composed, signer);
    return { raw, dkim: { d, s } };
  } catch (error) {
    return { failed: String(error), stage: 'sign' };
  }
});
