// RFC 5965 abuse reports (ARF): the message/feedback-report part names the kind of feedback and,
// when the provider does not redact it, the recipient who complained.
import { addressOf, field, fieldsOf, findPart, type MimePart } from './report.mime.ts';

export interface ArfFields {
  feedback_type: string;
  user_agent: string | null;
  recipient: string | null;
  original_mail_from: string | null;
  source_ip: string | null;
  arrival_date: string | null;
}

/** Feedback types that are a recipient's complaint (RFC 5965); `not-spam` and `auth-failure` (RFC 6591) are not. */
const COMPLAINTS = new Set(['abuse', 'fraud', 'virus', 'other']);

export const isComplaint = (feedbackType: string) => COMPLAINTS.has(feedbackType);

/** A recipient a provider left in: an address, and not its `redacted` stand-in. */
const unredacted = (address: string | null) => (address && !/^redacted@/i.test(address) ? address : null);

/** The report's fields; `included`: the header fields of the original message it carries. */
export function arfOf(tree: MimePart, included: [string, string][] | null): ArfFields | null {
  const part = findPart(tree, 'message/feedback-report');
  if (!part) return null;
  const f = fieldsOf(part.body.toString('utf8').split(/\r?\n[ \t]*\r?\n/)[0] ?? '');
  const feedbackType = field(f, 'feedback-type')?.toLowerCase();
  if (!feedbackType) return null;
  const original = included ?? [];
  return {
    feedback_type: feedbackType,
    user_agent: field(f, 'user-agent'),
    // Outlook.com (JMRP) names the recipient in a header of its own on the included message.
    recipient:
      unredacted(addressOf(field(f, 'original-rcpt-to'))) ??
      unredacted(addressOf(field(original, 'x-hmxmroriginalrecipient'))) ??
      unredacted(addressOf(field(original, 'to'))),
    original_mail_from: addressOf(field(f, 'original-mail-from')),
    source_ip: field(f, 'source-ip'),
    arrival_date: field(f, 'arrival-date') ?? field(f, 'received-date'),
  };
}
