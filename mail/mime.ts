// The exact bytes a live message goes out as: rendered content composed to MIME by nodemailer's
// MailComposer, once per attempt, so DKIM signs and the transport sends the same bytes.
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { parseMailbox } from './address.ts';
import { mailOptions, type RenderedContent } from './content.ts';

/** The raw message (multipart/alternative, Bcc never shown) with its Message-ID and Date. */
export function composeRaw(content: RenderedContent, { messageId, date }: { messageId: string; date: Date }): Promise<Buffer> {
  return new MailComposer(mailOptions(content, messageId, date)).compile().build();
}

/**
 * Every envelope recipient of a message, as a bare address: its To, then its Cc and Bcc. A
 * recipient may be written with a display name ("Ann <ann@example.com>"); the envelope, and the
 * grouping of recipients by domain, take the address alone.
 */
export function envelopeRecipients(content: RenderedContent): string[] {
  return [content.to, ...(content.cc ?? []), ...(content.bcc ?? [])].map((r) => parseMailbox(r)?.address ?? r);
}
