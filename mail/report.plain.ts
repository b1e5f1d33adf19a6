// Bounces in no standard format ("Undelivered Mail Returned to Sender" as plain text, the
// X-Failed-Recipients of older Exim, a provider's own wording): read only when their text holds
// an enhanced status code (RFC 3463), which is what decides hard or soft.
import { addressOf, field, type MimePart } from './report.mime.ts';
import { diagnosticOf, enhancedStatus } from './report.dsn.ts';
import type { ReportedRecipient } from './report.parse.ts';

/** The text of the message's text/plain parts, outside any included original message. */
function textOf(part: MimePart): string {
  if (part.type === 'text/plain') return part.body.toString('utf8');
  if (part.type.startsWith('multipart/')) return part.parts.map(textOf).join('\n');
  return '';
}

/** The SMTP reply a bounce quotes: the line holding the status code, from its reply code on. */
function replyLine(text: string, status: string): string | null {
  const line = text.split(/\r?\n/).find((l) => l.includes(status));
  if (!line) return null;
  const at = line.search(/\b[245]\d\d[ -][245]\.\d/);
  return (at >= 0 ? line.slice(at) : line).trim();
}

/**
 * Whether the message says it is a bounce: from a mailer daemon or postmaster, auto-submitted, or
 * titled as one. A person's reply that quotes a version number is not read for a status code.
 */
function saysBounce(headers: MimePart['headers']): boolean {
  return (
    /mailer-daemon|postmaster|mail delivery/i.test(field(headers, 'from') ?? '') ||
    /^auto-replied|^auto-generated/i.test(field(headers, 'auto-submitted') ?? '') ||
    /undeliver|returned|delivery (status|fail)|failure notice|could not be delivered/i.test(field(headers, 'subject') ?? '')
  );
}

export function plainBounceOf(tree: MimePart): ReportedRecipient[] | null {
  if (!saysBounce(tree.headers)) return null;
  const text = textOf(tree);
  const status = enhancedStatus(text);
  if (!status || status.startsWith('2.')) return null;
  const { diagnostic, smtp_code } = diagnosticOf(replyLine(text, status));
  return [
    {
      // Exim's X-Failed-Recipients, or the `<address>: host … said:` line Postfix writes.
      recipient:
        addressOf(field(tree.headers, 'x-failed-recipients')) ?? addressOf(/^\s*<([^<>\s]+@[^<>\s]+)>:/m.exec(text)?.[1] ?? null),
      original_recipient: null,
      action: 'failed',
      status,
      smtp_code,
      diagnostic,
      remote_mta: null,
    },
  ];
}
