// What one delivery attempt comes to, from the transport's report: sent, bounced (hard, block or
// soft) or deferred until a retry time. Pure, so the rules read and test apart from the actor.
import type { DeliveryReport } from '../../mta/transport.ts';
import type { AttemptOutcome, MessageStatus } from '../message/message.state.ts';

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
    stage: report.stage,
  };
  if (report.result === 'accepted') return base;
  if (report.result === 'permanent') return { ...base, result: 'bounced', bounce_type: refusalOf(report) };
  const wait = policy.schedule[attempt - 1];
  if (wait === undefined || now >= policy.horizon) return { ...base, result: 'bounced', bounce_type: 'soft' };
  return { ...base, result: 'deferred', retry_at: new Date(Math.min(now + wait, policy.horizon)).toISOString() };
}

/**
 * Whether a permanent refusal says the recipient is bad (hard: suppressed) or not (block: nobody
 * is). RFC 3463 class 7 is security or policy (a blocklist, DMARC, content): the sender was
 * refused, not the address. A refusal of RCPT TO is about that recipient, and a domain that
 * cannot take mail (null MX, no such domain: stage connect) about its recipients. MAIL FROM comes
 * before any recipient is named, so its refusal is about the sender. A refusal of the data is
 * about the message, unless its enhanced code is about an address (5.1.x, e.g. 5.1.1 from a host
 * that checks recipients late) other than the sender's (5.1.7, 5.1.8).
 */
function refusalOf(report: DeliveryReport): 'hard' | 'block' {
  const enhanced = report.reply.enhanced ?? '';
  if (enhanced.startsWith('5.7.')) return 'block';
  switch (report.stage) {
    case 'mail':
      return 'block';
    case 'data':
      return /^5\.1\.(?![78]$)/.test(enhanced) ? 'hard' : 'block';
    default:
      return 'hard';
  }
}

/** Where one recipient domain's transaction stands. */
export type DomainResult = 'sent' | 'bounced' | 'deferred';

/**
 * The message's status from its domains': deferred while any waits for a retry; once every one is
 * done, sent if every one accepted, bounced if any refused (its bounce names its recipients).
 */
export function messageStatusOf(domains: DomainResult[]): MessageStatus {
  if (domains.includes('deferred')) return 'deferred';
  return domains.every((d) => d === 'sent') ? 'sent' : 'bounced';
}
