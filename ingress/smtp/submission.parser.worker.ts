// The SMTP parser's thread: mailparser and the drafts of submission.drafts.ts, one message at a time
// per request, answered by id (lib/thread.ts).
import { GatepostError } from '../../errors/errors.catalog.ts';
import { serveJobs } from '../../lib/thread.ts';
import { parseMessage, submissionItems } from './submission.drafts.ts';
import type { ParseAnswer, ParseJob } from './submission.parser.ts';

serveJobs<ParseJob, ParseAnswer>(async ({ raw, envelope }) => {
  try {
    return { ok: submissionItems(await parseMessage(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)), envelope) };
  } catch (error) {
    if (error instanceof GatepostError) return { refused: error.toBody() };
    throw error;
  }
});
