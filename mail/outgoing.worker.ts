// The outgoing thread (outgoing.thread.ts): composes each message and signs it, answered by id.
import { parentPort } from 'node:worker_threads';
import { signDkim } from './dkim.ts';
import { composeRaw } from './mime.ts';
import type { OutgoingAnswer, OutgoingJob } from './outgoing.thread.ts';

async function make({ id, content, messageId, date, signer }: OutgoingJob): Promise<OutgoingAnswer> {
  let composed: Buffer;
  try {
    composed = await composeRaw(content, { messageId, date: new Date(date) });
  } catch (error) {
    return { id, failed: String(error), stage: 'compose' };
  }
  if (!signer) return { id, raw: composed, dkim: null };
  try {
    const { raw, d, s } = signDkim(composed, signer);
    return { id, raw, dkim: { d, s } };
  } catch (error) {
    return { id, failed: String(error), stage: 'sign' };
  }
}

parentPort!.on('message', (job: OutgoingJob) => {
  void make(job).then((answer) => parentPort!.postMessage(answer));
});
