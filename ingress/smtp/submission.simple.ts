// The common case of SMTP submission parsed on the spot: one text/plain part in US-ASCII, plain
// headers. Such a message needs none of mailparser's machinery (MIME trees, transfer and charset
// decoding, encoded words), only the steps mailparser would take for it, done the same way: its
// header split (mailsplit), its unfolding (libmime), nodemailer's addressparser, and its own
// text-to-html. Anything else returns null and goes to mailparser (submission.parser.ts).
// submission.simple.test.ts checks that both give the same drafts.
import { MailParser, type AddressObject, type EmailAddress, type ParsedMail } from 'mailparser';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { submissionItems, type Envelope, type Submission } from './submission.drafts.ts';

/** Larger messages are rare over submission and cheap to hand over; the fast path is for the small ones. */
const MAX_SIMPLE_BYTES = 64 * 1024;

// Headers whose value the drafts read, each allowed once here (mailparser merges or keeps the first).
const READ_ONCE = new Set(['from', 'to', 'cc', 'reply-to', 'subject', 'message-id', 'content-type']);
// Any of these means a structure or an encoding only mailparser handles.
const NOT_SIMPLE = new Set(['content-transfer-encoding', 'content-disposition']);
// text/plain, with at most a US-ASCII or UTF-8 charset (the body is ASCII, so both read the same).
const SIMPLE_TYPE = /^text\/plain[ \t]*(;[ \t]*charset[ \t]*=[ \t]*("?)(us-ascii|utf-8|ascii)\2[ \t]*;?[ \t]*)?$/i;
const SIMPLE_ENCODING = /^(7bit|8bit)$/i;

let textToHtml: ((text: string) => string) | null = null;

/** mailparser's own text-to-html (escaping, paragraphs, links), from one idle parser. */
function htmlOfText(text: string): string {
  if (!textToHtml) {
    const parser = new MailParser() as unknown as { textToHtml(s: string): string; linkifyWork: number };
    textToHtml = (s) => {
      parser.linkifyWork = 0; // its budget against crafted input is per message
      return parser.textToHtml(s);
    };
  }
  return textToHtml(text);
}

/** An address header as mailparser reads it (addressparser, names trimmed), or undefined if absent. */
function addressField(value: string | undefined): AddressObject | undefined {
  if (value === undefined) return undefined;
  return { value: trimNames(addressparser(value) as EmailAddress[]), html: '', text: '' };
}

/** The mailboxes with their names trimmed, in groups too, as mailparser trims them. */
function trimNames(list: EmailAddress[]): EmailAddress[] {
  return list.map((a) => ({ ...a, name: (a.name || '').toString().trim(), ...(a.group ? { group: trimNames(a.group) } : {}) }));
}

/** The drafts of a simple message, or null when it is not one (mailparser decides those). */
export function simpleSubmission(raw: Buffer, envelope: Envelope): Submission | null {
  if (raw.length > MAX_SIMPLE_BYTES) return null;
  // ASCII only, no NUL, no bare CR: nothing for a charset or an encoded word to change.
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b >= 0x20 && b <= 0x7e) continue;
    if (b === 9 || b === 10 || (b === 13 && raw[i + 1] === 10)) continue;
    return null;
  }
  const source = raw.toString('latin1');
  if (source.includes('=?')) return null;
  const blank = /\r?\n\r?\n/.exec(source);
  if (!blank) return null;
  const head = source.slice(0, blank.index);
  const body = source.slice(blank.index + blank[0].length);

  // Header lines as mailsplit makes them: a line starting with a space or tab continues the one before.
  const headerLines: { key: string; line: string }[] = [];
  for (const rawLine of head.split(/\r?\n/)) {
    if (rawLine.startsWith(' ') || rawLine.startsWith('\t')) {
      const last = headerLines[headerLines.length - 1];
      if (!last) return null;
      last.line += `\r\n${rawLine}`;
    } else {
      const colon = rawLine.indexOf(':');
      if (colon < 1 || /^(From |POST )/i.test(rawLine)) return null;
      headerLines.push({ key: rawLine.slice(0, colon).toLowerCase().trim(), line: rawLine });
    }
  }
  const values = new Map<string, string>();
  for (const { key, line } of headerLines) {
    if (NOT_SIMPLE.has(key) && !(key === 'content-transfer-encoding' && SIMPLE_ENCODING.test(valueOf(line)))) return null;
    if (key.startsWith('content-') && key !== 'content-type' && key !== 'content-transfer-encoding') return null;
    if (READ_ONCE.has(key)) {
      if (values.has(key)) return null;
      values.set(key, valueOf(line));
    }
  }
  const type = values.get('content-type');
  if (type !== undefined && !SIMPLE_TYPE.test(type)) return null;

  // mailparser's text: the body with CRLF made LF; an empty body is for mailparser to refuse.
  const text = body.replace(/\r?\n/g, '\n');
  if (!text.trim()) return null;
  const subject = values.get('subject');
  const messageId = values.get('message-id');
  const mail = {
    headerLines,
    from: addressField(values.get('from')),
    to: addressField(values.get('to')),
    cc: addressField(values.get('cc')),
    replyTo: addressField(values.get('reply-to')),
    // mailparser keeps no empty Subject or Message-ID.
    ...(subject ? { subject } : {}),
    ...(messageId ? { messageId: messageIdFormat(messageId) } : {}),
    text,
    textAsHtml: htmlOfText(text),
    html: false,
    attachments: [],
  } as unknown as ParsedMail;
  return submissionItems(mail, envelope);
}

/** A header's value as libmime's decodeHeader gives it: unfolded, trimmed. */
function valueOf(line: string): string {
  const unfolded = line.replace(/(?:\r?\n|\r)[ \t]*/g, ' ').trim();
  return unfolded.slice(unfolded.indexOf(':') + 1).trim();
}

/** mailparser's ensureMessageIDFormat: in angle brackets. */
function messageIdFormat(value: string): string {
  return `${value.startsWith('<') ? '' : '<'}${value}${value.endsWith('>') ? '' : '>'}`;
}
