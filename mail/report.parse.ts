// What a message that arrived at a return-path domain says (docs/bounces.md): a delivery status
// notification (RFC 3464), an abuse report (RFC 5965 ARF), a bounce in no standard format whose
// text holds an enhanced status code, or nothing recognisable. One MIME walk per message
// (report.mime.ts); pure, and never throws on what it is given.
import { addressOf, field, findPart, mimeTree, type MimePart } from './report.mime.ts';
import { dsnOf } from './report.dsn.ts';
import { arfOf } from './report.arf.ts';
import { plainBounceOf } from './report.plain.ts';

/** The original message's headers, as a report includes them (whole, or the headers only). */
export interface OriginalHeaders {
  message_id: string | null;
  /** The envelope sender it went out with (the VERP address, for a message Gatepost sent). */
  return_path: string | null;
  from: string | null;
  to: string | null;
  subject: string | null;
}

export type DsnAction = 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';

/** One recipient's part of a report (RFC 3464 section 2.3). */
export interface ReportedRecipient {
  /** Final-Recipient (or, in a non-standard bounce, the address it names); lower case. */
  recipient: string | null;
  original_recipient: string | null;
  action: DsnAction;
  /** The enhanced status code (RFC 3463), `5.1.1`. */
  status: string | null;
  /** The SMTP reply code the diagnostic carries, when it is an SMTP one. */
  smtp_code: number | null;
  /** Diagnostic-Code's text, without its `smtp;` type. */
  diagnostic: string | null;
  remote_mta: string | null;
}

export type ParsedReport =
  | { kind: 'dsn'; reporting_mta: string | null; recipients: ReportedRecipient[]; original: OriginalHeaders | null }
  | {
      kind: 'arf';
      /** `abuse`, `fraud`, `virus`, `other`, `not-spam`, `auth-failure` (RFC 5965, 6591), lower case. */
      feedback_type: string;
      user_agent: string | null;
      /** Original-Rcpt-To, or a provider's own header naming the recipient (Microsoft's X-HmXmrOriginalRecipient). */
      recipient: string | null;
      original_mail_from: string | null;
      source_ip: string | null;
      arrival_date: string | null;
      original: OriginalHeaders | null;
    }
  | { kind: 'plain'; recipients: ReportedRecipient[]; original: OriginalHeaders | null }
  | { kind: 'unknown'; reason: string; original: OriginalHeaders | null };

/** The header fields of the included original message: a message/rfc822 part's, or a text/rfc822-headers part. */
export function includedHeaders(tree: MimePart): [string, string][] | null {
  const part = findPart(tree, 'message/rfc822', 'message/global', 'text/rfc822-headers', 'message/rfc822-headers');
  if (!part) return null;
  const headers = part.parts[0]?.headers ?? mimeTree(part.body).headers;
  return headers.length > 0 ? headers : null;
}

function originalOf(headers: [string, string][] | null): OriginalHeaders | null {
  if (!headers) return null;
  const messageId = field(headers, 'message-id');
  return {
    message_id: messageId ? (/<[^<>]+>/.exec(messageId)?.[0] ?? messageId) : null,
    return_path: addressOf(field(headers, 'return-path')),
    from: field(headers, 'from'),
    to: field(headers, 'to'),
    subject: field(headers, 'subject'),
  };
}

export function parseReport(raw: Buffer): ParsedReport {
  const tree = mimeTree(raw);
  const included = includedHeaders(tree);
  const original = originalOf(included);
  const reportType = tree.type === 'multipart/report' ? (tree.params['report-type'] ?? '').toLowerCase() : null;
  if (reportType === 'delivery-status' || findPart(tree, 'message/delivery-status', 'message/global-delivery-status')) {
    const dsn = dsnOf(tree);
    if (dsn) return { kind: 'dsn', ...dsn, original };
  }
  if (reportType === 'feedback-report' || findPart(tree, 'message/feedback-report')) {
    const arf = arfOf(tree, included);
    if (arf) return { kind: 'arf', ...arf, original };
  }
  const plain = plainBounceOf(tree);
  if (plain) return { kind: 'plain', recipients: plain, original };
  const reason =
    reportType !== null
      ? `a multipart/report (report-type=${reportType || 'none'}) with no part this parser reads`
      : 'neither a delivery status notification nor an abuse report, and no status code in its text';
  return { kind: 'unknown', reason, original };
}
