// The SMTP parser's thread: mailparser and the drafts of submission.drafts.ts, one message at a time
// per request, answered by id.
import { parentPort } from 'node:worker_threads';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { parseMessage, submissionItems, type Envelope } from './submission.drafts.ts';
import type { ParseAnswer } from './submission.parser.ts';

parentPort!.on('message', ({ id, raw, envelope }: { id: number; raw: Uint8Array; envelope: Envelope }) => {
  const buffer = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  parseMessage(buffer)
    .then((mail) => submissionItems(mail, envelope))
    .then(
      (ok): ParseAnswer => ({ id, ok }),
      (error: unknown): ParseAnswer =>
        error instanceof GatepostError
          ? { id, refused: error.toBody() }
          : { id, failed: String((error as Error)?.stack ?? error) },
    )
    .then((answer) => parentPort!.postMessage(answer));
});
