// Content policy: pure checks, no I/O. The gate runs the checks on what the sender gave; the
// message actor runs `checkContent` on the rendered message inside the admitting turn, so no
// caller can commit a message that breaks them.
import { GatepostError, type ErrorDetail } from '../errors/errors.catalog.ts';
import { parseMailbox, type Mailbox } from './address.ts';
import { contentBytes, type RenderedContent } from './content.ts';

/** The largest rendered message (subject, html, text and headers) Gatepost accepts: 1 MiB. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 3600 * 1000;
export const MAX_HEADERS = 50;
/** Recipients of one message: its `to` and every cc and bcc. */
export const MAX_RECIPIENTS = 50;

// Headers Gatepost writes itself; a sender setting them could forge or break the message.
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  // On the message's top level it would make a client show the whole message as an attachment.
  'content-disposition',
  'reply-to',
  'sender',
  'return-path',
  'received',
  'dkim-signature',
  'in-reply-to',
  'references',
]);
// RFC 5322 §2.2: a field name is printable US-ASCII except the colon.
const FIELD_NAME = /^[!-9;-~]{1,76}$/;

export function checkAttachments(count: number): void {
  if (count > 0) throw new GatepostError('attachments_unsupported');
}

export function checkHeaders(headers: Record<string, string>, field = 'headers'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const names = Object.keys(headers);
  if (names.length > MAX_HEADERS) problems.push({ field, message: `at most ${MAX_HEADERS} headers` });
  for (const name of names) {
    const value = headers[name]!;
    if (!FIELD_NAME.test(name)) problems.push({ field: `${field}.${name}`, message: 'not a valid header name' });
    else if (RESERVED_HEADERS.has(name.toLowerCase()))
      problems.push({ field: `${field}.${name}`, message: 'set by Gatepost; use the dedicated field instead' });
    if (/[\r\n\0]/.test(value)) problems.push({ field: `${field}.${name}`, message: 'must not contain CR, LF or NUL' });
    else if (value.length > 998) problems.push({ field: `${field}.${name}`, message: 'longer than 998 characters' });
  }
  return problems;
}

export function checkSendAt(sendAt: string | undefined, now = Date.now()): ErrorDetail[] {
  if (sendAt === undefined) return [];
  const at = Date.parse(sendAt);
  if (Number.isNaN(at)) return [{ field: 'send_at', message: 'not an ISO 8601 date-time' }];
  if (at < now) return [{ field: 'send_at', message: 'is in the past' }];
  if (at > now + MAX_SCHEDULE_AHEAD_MS) return [{ field: 'send_at', message: 'is more than 30 days ahead' }];
  return [];
}

/** The valid mailboxes of a list; each invalid one is added to `problems`. */
function mailboxes(field: string, addresses: string[] = [], problems: ErrorDetail[]): Mailbox[] {
  return addresses.flatMap((address, i) => {
    const mailbox = parseMailbox(address);
    if (!mailbox) problems.push({ field: `${field}[${i}]`, message: 'not a valid email address' });
    return mailbox ? [mailbox] : [];
  });
}

/**
 * The rendered message: valid mailboxes, no line breaks where headers go, within the size limit.
 * Answers the sender's and the recipients' mailboxes, parsed.
 */
export function checkContent(content: RenderedContent): { from: Mailbox; to: Mailbox; copies: Mailbox[] } {
  const problems: ErrorDetail[] = [];
  const from = parseMailbox(content.from);
  const to = parseMailbox(content.to);
  if (!from) problems.push({ field: 'from', message: 'not a valid email address' });
  if (!to) problems.push({ field: 'to', message: 'not a valid email address' });
  const copies = [...mailboxes('cc', content.cc, problems), ...mailboxes('bcc', content.bcc, problems)];
  // Shown only, but they are headers: they must be mailboxes too.
  mailboxes('shown.to', content.shown?.to, problems);
  mailboxes('shown.cc', content.shown?.cc, problems);
  if (1 + copies.length > MAX_RECIPIENTS) problems.push({ field: 'cc', message: `at most ${MAX_RECIPIENTS} recipients in all` });
  if (content.reply_to !== null && !parseMailbox(content.reply_to))
    problems.push({ field: 'reply_to', message: 'not a valid email address' });
  if (/[\r\n\0]/.test(content.subject)) problems.push({ field: 'subject', message: 'must not contain CR, LF or NUL' });
  if (content.subject.trim() === '') problems.push({ field: 'subject', message: 'must not be empty' });
  if (content.html.trim() === '') problems.push({ field: 'html', message: 'must not be empty' });
  problems.push(...checkHeaders(content.headers));
  if (problems.length > 0) {
    throw new GatepostError(
      'invalid_request',
      `The message is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}.`,
      {
        details: problems,
      },
    );
  }
  const bytes = contentBytes(content);
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new GatepostError(
      'message_too_large',
      `The rendered message is ${bytes} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (1 MiB).`,
    );
  }
  return { from: from!, to: to!, copies };
}
