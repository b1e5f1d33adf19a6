// A submitted message as SendDrafts: the DATA parsed with mailparser, one draft per envelope
// recipient. The envelope decides who receives (RFC 5321 §3.3); the To and Cc headers are kept
// as the sender wrote them, so a recipient who is in neither is a Bcc.
import { simpleParser, type AddressObject, type EmailAddress, type ParsedMail } from 'mailparser';
import { invalid, type ErrorDetail } from '../../errors/errors.catalog.ts';
import type { BatchItem, SendDraft, Stream } from '../../gate/gate.ts';
import { normalizeAddress } from '../../mail/address.ts';
import { htmlFromText } from '../../mail/content.ts';

export interface Envelope {
  /** MAIL FROM; null for the null sender `<>`. */
  mailFrom: string | null;
  rcptTo: string[];
}

/** A submitted message as the gate takes it: one item per envelope recipient. */
export interface Submission {
  items: BatchItem[];
  batchKey?: string;
}

export function parseMessage(raw: Buffer): Promise<ParsedMail> {
  // Gatepost writes the plain-text part from the html itself when there is none, and the html of
  // a text-only message (htmlFromText); cid: images would be attachments, which are refused anyway.
  return simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
}

// Headers that become draft fields, or that Gatepost writes anew when it builds the message
// (structure, date, Message-ID, trace, a signature the rebuilt message would break). Every
// other header goes to the gate, which refuses those it does not let a sender set.
const REBUILT =
  /^(from|to|cc|bcc|reply-to|subject|date|message-id|mime-version|content-[a-z-]+|received|return-path|dkim-signature)$/i;

// What SMTP has no field for, chosen by headers of Gatepost's own, which are taken and not sent
// on (as Postmark's X-PM-Message-Stream and Mailgun's X-Mailgun-Track-* are by those providers).
const CHOICE = /^x-gatepost-(stream|track-opens|track-clicks)$/i;
const STREAMS: readonly Stream[] = ['transactional', 'broadcast'];

type Choices = Pick<SendDraft, 'stream' | 'track_opens' | 'track_clicks'>;

/** The stream and tracking switches a message's X-Gatepost-* headers ask for. */
function choicesOf(mail: ParsedMail, problems: ErrorDetail[]): Choices {
  const choices: Choices = {};
  for (const { line } of mail.headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim();
    const which = CHOICE.exec(name)?.[1]?.toLowerCase();
    if (!which) continue;
    const value = line.slice(colon + 1).trim().toLowerCase();
    const field = `headers.${name}`;
    if (which === 'stream') {
      if (STREAMS.includes(value as Stream)) choices.stream = value as Stream;
      else problems.push({ field, message: `must be one of ${STREAMS.join(', ')}` });
    } else if (value === 'true' || value === 'false') {
      choices[which === 'track-opens' ? 'track_opens' : 'track_clicks'] = value === 'true';
    } else problems.push({ field, message: 'must be true or false' });
  }
  return choices;
}

/** The headers the sender set, unfolded (RFC 5322 §2.2.3); a repeated one is a problem. */
function passedHeaders(mail: ParsedMail, problems: ErrorDetail[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const { key, line } of mail.headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim();
    if (REBUILT.test(name) || CHOICE.test(name)) continue;
    if (seen.has(key)) problems.push({ field: `headers.${name}`, message: 'appears twice; Gatepost sends each header once' });
    seen.add(key);
    headers[name] = line
      .slice(colon + 1)
      .replace(/\r?\n(?=[ \t])/g, '')
      .trim();
  }
  return headers;
}

/** Every mailbox of an address header, groups flattened, as "Name" <address>. */
function mailboxes(field: AddressObject | AddressObject[] | undefined): string[] {
  return [field ?? []]
    .flat()
    .flatMap((o) => o.value.flatMap(flat))
    .flatMap(({ name, address }) => (!address ? [] : name ? [`"${name.replace(/[\\"]/g, '\\$&')}" <${address}>`] : [address]));
}

/** A mailbox, or a group's mailboxes. */
function flat(e: EmailAddress): EmailAddress[] {
  return e.group ? e.group.flatMap(flat) : [e];
}

/** At most one mailbox: From and Reply-To name one sender, one reply address. */
function single(field: string, list: string[], problems: ErrorDetail[]): string | undefined {
  if (list.length > 1) problems.push({ field, message: `names ${list.length} mailboxes; Gatepost takes one` });
  return list[0];
}

/**
 * One item per envelope recipient, all to be admitted together. The Message-ID, when there is
 * one, is the idempotency key (SMTP has no other): a client that resends a message it got no
 * answer for sends each recipient nothing twice.
 */
export function submissionItems(mail: ParsedMail, envelope: Envelope): Submission {
  const problems: ErrorDetail[] = [];
  const headers = passedHeaders(mail, problems);
  const choices = choicesOf(mail, problems);
  const from = single('from', mailboxes(mail.from), problems) ?? envelope.mailFrom ?? undefined;
  const replyTo = single('reply_to', mailboxes(mail.replyTo), problems);
  const text = mail.text?.trim() ? mail.text : undefined;
  // Text-only mail gets the html every ingress makes of a text: escaped, line breaks kept.
  const html = mail.html || (text ? htmlFromText(text) : undefined);
  if (!html) problems.push({ field: 'body', message: 'is empty: send a text/plain or text/html part' });
  if (problems.length > 0) throw invalid(problems, 'The message cannot be sent as it is.');

  const base: Omit<SendDraft, 'to'> = {
    ...(from ? { from } : {}),
    ...(replyTo ? { reply_to: replyTo } : {}),
    ...(mail.subject !== undefined ? { subject: mail.subject } : {}),
    html,
    ...(text ? { text } : {}),
    headers,
    ...choices,
    attachments: mail.attachments.length,
    shown: { to: mailboxes(mail.to), cc: mailboxes(mail.cc) },
    literal: true,
  };
  const key = mail.messageId ? `smtp:${mail.messageId}` : undefined;
  const items = envelope.rcptTo.map((to) => ({
    draft: { ...base, to },
    ...(key ? { idempotencyKey: `${key}:${normalizeAddress(to)}` } : {}),
  }));
  // One recipient is atomic by itself; several are one batch, continued by a resend.
  return { items, ...(key && items.length > 1 ? { batchKey: key } : {}) };
}
