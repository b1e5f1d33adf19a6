// What one delivery attempt comes to, from the transport's report: sent, bounced (hard, block or
// soft) or deferred until a retry time. Pure, so the rules read and test apart from the actor.
import type { DeliveryReport } from '../../mta/transport.ts';
import type { AttemptOutcome } from '../message/message.state.ts';

export interface RetryPolicy {
  schedule: number[];
  /** When retries end, ms since the epoch: the message's due time (its send_at, or its creation) plus the horizon. */
  horizon: number;
}

/**
 * What an attempt comes to. A transient failure is retried after the schedule's next wait, but
 * never later than the horizon (the last retry is at the horizon); when the waits run out or the
 * horizon has passed, the message soft-bounces: whichever comes first.
 */
export function classify(report: DeliveryReport, attempt: number, policy: RetryPolicy, now: number): AttemptOutcome {
  const base: AttemptOutcome = {
    attempt,
    result: 'sent',
    smtp_code: report.reply.code,
    enhanced_code: report.reply.enhanced,
    response: report.reply.text,
    mx: report.mx,
    ip: report.ip,
    tls: report.tls,
    connected_at: report.connected_at,
    accepted_at: report.accepted_at,
    retry_at: null,
  };
  if (report.result === 'accepted') return base;
  if (report.result === 'permanent') {
    // RFC 3463 class 7: security or policy (a blocklist, DMARC, content): the sender was refused, not the address.
    const block = report.reply.enhanced?.startsWith('5.7.') ?? false;
    return { ...base, result: 'bounced', bounce_type: block ? 'block' : 'hard' };
  }
  const wait = policy.schedule[attempt - 1];
  if (wait === undefined || now >= policy.horizon) return { ...base, result: 'bounced', bounce_type: 'soft' };
  return { ...base, result: 'deferred', retry_at: new Date(Math.min(now + wait, policy.horizon)).toISOString() };
}
