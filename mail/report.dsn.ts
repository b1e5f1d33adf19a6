// RFC 3464 delivery status notifications: the message/delivery-status part is one block of
// per-message fields, then one block per recipient, separated by empty lines.
import { addressOf, field, fieldsOf, findPart, type MimePart } from './report.mime.ts';
import type { DsnAction, ReportedRecipient } from './report.parse.ts';

const ACTIONS: readonly DsnAction[] = ['failed', 'delayed', 'delivered', 'relayed', 'expanded'];

/** `5.1.1` in a Status field or a diagnostic; null when there is none. */
export function enhancedStatus(text: string | null): string | null {
  return text ? (/\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(text)?.[1] ?? null) : null;
}

/** A Diagnostic-Code's text and, for the `smtp` type, its reply code. */
export function diagnosticOf(value: string | null): { diagnostic: string | null; smtp_code: number | null } {
  if (!value) return { diagnostic: null, smtp_code: null };
  const semi = value.indexOf(';');
  const type = semi > 0 ? value.slice(0, semi).trim().toLowerCase() : '';
  const text = semi > 0 && /^[a-z-]+$/.test(type) ? value.slice(semi + 1).trim() : value.trim();
  const code = /^([245]\d\d)[ -]/.exec(text);
  return { diagnostic: text, smtp_code: code ? Number(code[1]) : null };
}

export function dsnOf(tree: MimePart): { reporting_mta: string | null; recipients: ReportedRecipient[] } | null {
  const part = findPart(tree, 'message/delivery-status', 'message/global-delivery-status');
  if (!part) return null;
  const [perMessage, ...perRecipient] = part.body
    .toString('utf8')
    .split(/\r?\n[ \t]*\r?\n/)
    .map((block) => fieldsOf(block))
    .filter((f) => f.length > 0);
  const recipients: ReportedRecipient[] = [];
  for (const f of perRecipient) {
    const action = field(f, 'action')?.toLowerCase().split(/[\s(]/)[0] as DsnAction | undefined;
    if (!action || !ACTIONS.includes(action)) continue;
    const { diagnostic, smtp_code } = diagnosticOf(field(f, 'diagnostic-code'));
    recipients.push({
      recipient: addressOf(field(f, 'final-recipient')) ?? addressOf(field(f, 'original-recipient')),
      original_recipient: addressOf(field(f, 'original-recipient')),
      action,
      status: enhancedStatus(field(f, 'status')) ?? enhancedStatus(diagnostic),
      smtp_code,
      diagnostic,
      remote_mta: field(f, 'remote-mta')?.replace(/^dns;\s*/i, '') ?? null,
    });
  }
  if (recipients.length === 0) return null;
  return {
    reporting_mta: perMessage ? (field(perMessage, 'reporting-mta')?.replace(/^dns;\s*/i, '') ?? null) : null,
    recipients,
  };
}
