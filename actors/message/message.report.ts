// What a report that came back to a message's return path puts on its timeline (docs/bounces.md):
// the rules, pure, apart from the actor that applies them in MessageActor.recordReport.
import { domainOf, normalizeAddress } from '../../mail/address.ts';
import type { EventType, StoredEvent } from '../../events/email.event.ts';
import type { AttemptOutcome, LateReport, MessageOutcomes, MessageRecord } from './message.state.ts';

/**
 * A late bounce's type, by the rules of a bounce at delivery (actors/delivery/delivery.outcome.ts):
 * a failure with a 5.x.x status is hard (the recipient is suppressed) unless it is a policy
 * refusal (5.7.x: block, which says nothing of the recipient); a delay, or a failure with a 4.x.x
 * status (or none), is soft.
 */
export function lateBounceType(action: 'failed' | 'delayed', status: string | null): NonNullable<AttemptOutcome['bounce_type']> {
  if (action !== 'failed' || !status?.startsWith('5.')) return 'soft';
  return status.startsWith('5.7.') ? 'block' : 'hard';
}

/** Every address the message went to: its `to`, and the envelope recipients its attempts name. */
export function recipientsOf(record: MessageRecord, outcomes: MessageOutcomes): Set<string> {
  const all = new Set([normalizeAddress(record.to)]);
  for (const e of outcomes.events) {
    for (const r of (e.data.recipients as string[] | undefined) ?? []) all.add(normalizeAddress(r));
  }
  return all;
}

/** The event a report records, in the data shape the delivery's own `email.bounced` has. */
export function reportEvent(
  report: LateReport,
  to: string,
  recipient: string,
): { type: EventType; data: Record<string, unknown> } {
  if (report.kind === 'complaint') {
    return {
      type: 'email.complained',
      data: {
        to,
        recipients: [recipient],
        feedback_type: report.feedback_type,
        user_agent: report.user_agent,
        report_id: report.report_id,
      },
    };
  }
  return {
    type: 'email.bounced',
    data: {
      to,
      attempt: null,
      smtp_code: report.smtp_code,
      enhanced_code: report.status,
      response: report.diagnostic ?? '',
      mx: report.remote_mta,
      ip: null,
      tls: null,
      connected_at: null,
      accepted_at: null,
      stage: null,
      domain: domainOf(recipient),
      recipients: [recipient],
      bounce_type: lateBounceType(report.action, report.status),
      source: report.source,
      action: report.action,
      report_id: report.report_id,
    },
  };
}

/** Whether the timeline has this report's event already: the same report, or another saying the same. */
export function recordedAlready(events: StoredEvent[], event: { type: EventType; data: Record<string, unknown> }): boolean {
  const who = String(event.data.recipients);
  return events.some(
    (e) =>
      e.type === event.type &&
      e.data.report_id !== undefined &&
      String(e.data.recipients) === who &&
      (e.type === 'email.complained' ||
        (e.data.action === event.data.action && e.data.enhanced_code === event.data.enhanced_code)),
  );
}
