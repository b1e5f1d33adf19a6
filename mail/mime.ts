// The exact bytes a live message goes out as: rendered content composed to MIME by nodemailer's
// MailComposer, once per attempt, so DKIM signs and the transport sends the same bytes.
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { mailOptions, type RenderedContent } from './content.ts';

/** The raw message (multipart/alternative, Bcc never shown) with its Message-ID and Date. */
export function composeRaw(content: RenderedContent, { messageId, date }: { messageId: string; date: Date }): Promise<Buffer> {
  return new MailComposer(mailOptions(content, messageId, date)).compile().build();
}

/** Every envelope recipient of a message: its To, then its Cc and Bcc. */
export function envelopeRecipients(content: RenderedContent): string[] {
  return [content.to, ...(content.cc ?? []), ...(content.bcc ?? [])];
}
