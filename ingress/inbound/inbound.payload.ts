// What a received message becomes: parsed once with mailparser into the email.inbound payload
// (docs/inbound.md, field by field) and its attachments' bytes, which the catalog keeps beside
// it. The URLs are made where the payload is served or posted, from GATEPOST_PUBLIC_URL, so a
// stored payload holds none.
import { simpleParser, type AddressObject } from 'mailparser';
import type { Verdicts } from '../../mail/verdicts.ts';
import type { InboundAttachment } from '../../store/catalog.port.ts';

export interface Mailbox {
  address: string;
  name: string;
}

export interface AttachmentMeta {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
}

export interface InboundPayload {
  /** The Message-ID header (not named message_id: that key names a sent message of Gatepost's in event data). */
  header_message_id: string | null;
  date: string | null;
  from: Mailbox | null;
  to: Mailbox[];
  cc: Mailbox[];
  reply_to: Mailbox[];
  subject: string | null;
  text: string | null;
  html: string | null;
  /** Every header line in order, repeated ones (Received) each on its own. */
  headers: { name: string; value: string }[];
  attachments: AttachmentMeta[];
  auth: Verdicts;
  [key: string]: unknown;
}

const mailboxes = (field: AddressObject | AddressObject[] | undefined): Mailbox[] =>
  (Array.isArray(field) ? field : field ? [field] : [])
    .flatMap((o) => o.value)
    // A group (RFC 5322 §3.4) lists its members; an undisclosed-recipients group lists none.
    .flatMap((a) => (a.group ? a.group : [a]))
    .filter((a) => a.address)
    .map((a) => ({ address: a.address!, name: a.name ?? '' }));

/** The header line's value: after the first colon, folding undone. */
const valueOf = (line: string) =>
  line
    .slice(line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();

/**
 * Parses `raw` (any bytes: a message that is not MIME, or has no end to its header section, still
 * parses, as far as it goes). The attachments' bytes come back apart from the payload.
 */
export async function parseInbound(
  raw: Buffer,
  auth: Verdicts,
): Promise<{ payload: InboundPayload; attachments: InboundAttachment[] }> {
  const parsed = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
  const attachments = parsed.attachments.map((a) => ({
    filename: a.filename ?? null,
    content_type: a.contentType || 'application/octet-stream',
    size: a.content.length,
    content_id: a.contentId ?? null,
    content: a.content,
  }));
  return {
    payload: {
      header_message_id: parsed.messageId ?? null,
      date: parsed.date && !Number.isNaN(parsed.date.getTime()) ? parsed.date.toISOString() : null,
      from: mailboxes(parsed.from)[0] ?? null,
      to: mailboxes(parsed.to),
      cc: mailboxes(parsed.cc),
      reply_to: mailboxes(parsed.replyTo),
      subject: parsed.subject ?? null,
      text: parsed.text ?? null,
      html: parsed.html || null,
      headers: parsed.headerLines.map((h) => ({ name: h.line.slice(0, h.line.indexOf(':')).trim(), value: valueOf(h.line) })),
      attachments: attachments.map(({ content: _, ...meta }) => meta),
      auth,
    },
    attachments,
  };
}

/** The payload's URLs under `base` (GATEPOST_PUBLIC_URL): the raw message, and each attachment's. */
export function inboundLinks(base: string, id: string, payload: Record<string, unknown>) {
  const at = `${base.replace(/\/$/, '')}/v1/inbound/messages/${id}`;
  const attachments = (payload.attachments as AttachmentMeta[] | undefined) ?? [];
  return { raw_url: `${at}/raw`, attachments: attachments.map((a, n) => ({ ...a, url: `${at}/attachments/${n}` })) };
}
