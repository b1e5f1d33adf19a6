// The state a MessageActor keeps, and the events on a message's timeline.
import type { RenderedContent } from '../../mail/content.ts';
import type { Quota } from '../../store/catalog.port.ts';
import type { MessageOrigin, StoredEvent } from '../../events/email.event.ts';
import type { SmtpStage } from '../../mta/transport.ts';
import type { TokenClaim } from '../../mail/tracking.token.ts';

export type Stream = 'transactional' | 'broadcast';

/** `held`: admitted as part of a batch whose outcome is not decided yet (see actors/batch). */
export type MessageStatus = 'held' | 'scheduled' | 'queued' | 'deferred' | 'sent' | 'bounced';

export interface AdmitResponse {
  id: string;
  status: 'queued' | 'scheduled';
  to: string;
  created_at: string;
  send_at: string | null;
  sandbox: boolean;
}

/** Small, rewritten as the message moves on. */
export interface MessageRecord {
  id: string;
  tenant_id: string;
  /** The id of the API key that sent it: a `sending_access` key reads only its own messages. */
  key_id: string;
  sandbox: boolean;
  stream: Stream;
  ingress: string;
  /** What a repeat under the same idempotency key must match; null without a key (nothing can repeat it). */
  request_hash: string | null;
  idempotency_key: string | null;
  /** The request (or SMTP session) that made it, for the log lines of its delivery; null (or absent, made before) if unknown. */
  request_id?: string | null;
  /** The Message-ID header, the same on every delivery attempt. */
  message_id_header: string;
  tags: string[];
  status: MessageStatus;
  /** While held: the batch attempt that decides whether this message is sent or rolled back. */
  hold?: BatchHold;
  created_at: string;
  send_at: string | null;
  /** The recipient, as the admission answered it. */
  to: string;
  /** What made it, when not a request alone (a broadcast); its lifecycle events carry it. */
  origin?: MessageOrigin;
  events: StoredEvent[];
}

/** The admission's answer, the same for the first request and every replay. */
export function responseOf(record: MessageRecord): AdmitResponse {
  return {
    id: record.id,
    status: record.send_at ? 'scheduled' : 'queued',
    to: record.to,
    created_at: record.created_at,
    send_at: record.send_at,
    sandbox: record.sandbox,
  };
}

/**
 * What happens to a message after its hand-over: the delivery outcomes and webhook results, with
 * the record's facts that recording them needs. Kept under a key of its own, apart from the
 * record, so that recording an outcome reads and rewrites this small value, not the record with
 * its whole timeline. Made from the record by the first outcome.
 */
export interface MessageOutcomes {
  tenant_id: string;
  to: string;
  created_at: string;
  /** The status the last delivery outcome set; null while there is none, and the record's holds. */
  status: MessageStatus | null;
  /** The record's origin, which the events recorded here carry too. */
  origin?: MessageOrigin;
  events: StoredEvent[];
}

/** The message as its readers see it: the record, with its outcomes' status and events after its own. */
export function messageView(record: MessageRecord, outcomes: MessageOutcomes | undefined): MessageRecord {
  if (!outcomes || outcomes.events.length === 0) return record;
  return { ...record, status: outcomes.status ?? record.status, events: [...record.events, ...outcomes.events] };
}

/** One attempt of an all-or-nothing batch (actors/batch): it commits or rolls back as a whole. */
export interface BatchHold {
  batch_id: string;
  attempt: number;
}

/** What the gate hands the message actor: the record's fields it chooses, the rendered content, the tenant's quota. */
export type AdmitArgs = Pick<
  MessageRecord,
  | 'tenant_id'
  | 'key_id'
  | 'sandbox'
  | 'stream'
  | 'ingress'
  | 'request_hash'
  | 'idempotency_key'
  | 'tags'
  | 'send_at'
  | 'request_id'
  | 'origin'
> & {
  content: RenderedContent;
  /**
   * The key this message's tracking and unsubscribe tokens are signed with (mail/tracking.token.ts):
   * kept apart from the record, which readers of the message see.
   */
  tracking_key?: string;
  /** The tenant's quota as the catalog holds it (`Tenant.quota`): admit takes the send from it. */
  quota_limits: Quota;
  /** Admit the message held, to be released or rolled back with its batch. */
  hold?: BatchHold;
};

export interface AdmitResult {
  response: AdmitResponse;
  replayed: boolean;
}

/** What delivery needs: written once at admission, kept out of the record. */
export interface DeliveryView {
  record: MessageRecord;
  content: RenderedContent;
}

/**
 * Outcome of one delivery attempt, recorded on the timeline (a row, not an exception): what the
 * remote host answered, in whole, and who answered it over what.
 */
export interface AttemptOutcome {
  attempt: number;
  result: 'sent' | 'captured' | 'deferred' | 'bounced';
  /**
   * For a bounce: hard (refused for good: the recipient is suppressed), soft (retries ran out),
   * block (a policy or blocklist refusal, 5.7.x: it says nothing of the recipient, so it
   * suppresses nobody).
   */
  bounce_type?: 'hard' | 'soft' | 'block';
  /** The remote reply: its code and enhanced status code (RFC 3463) when there was one, and its whole text. */
  smtp_code: number | null;
  enhanced_code: string | null;
  response: string;
  /** The host that answered (an MX host, or the relay) and its address; null when none did. */
  mx: string | null;
  ip: string | null;
  /** The TLS the attempt went over; null: plain text, or not known (through a relay). */
  tls: { version: string; cipher: string } | null;
  /** ISO times the carrying connection was made and the message accepted. */
  connected_at: string | null;
  accepted_at: string | null;
  retry_at: string | null;
  /** Where a refusal or failure came (connect, mail, rcpt, data); null when accepted or captured. */
  stage?: SmtpStage | null;
  /**
   * A live attempt's transaction: its envelope recipients, and their domain when they are on one
   * (direct delivery makes a transaction per recipient domain; the relay takes every recipient in one).
   */
  domain?: string;
  recipients?: string[];
  /** The verified domain the message was sent from (its From), whose breaker hears of the outcome. */
  sending_domain?: string;
  /** The local address the attempt went from, when GATEPOST_SOURCE_IPS lists any. */
  source_ip?: string;
  /** The signed delivery receipt of an accepted transaction (mta/receipt.ts). */
  receipt?: { id: string; jws: string };
  /**
   * The message's status once this outcome is recorded, when it is not the outcome's own: with
   * recipients on several domains the message is sent only once every domain accepted.
   */
  message_status?: MessageStatus;
}

/**
 * Published when a message is due for delivery. A sandbox message's taker reads it from its actor
 * (sandbox deliveries only capture: nothing leaves, so there is no attempt to mark in flight); a
 * live one's carries its place in the fair queue, so taking it reads nothing. Both say whose the
 * message is and since when it waits, which the queue's metrics count from the hand-over alone
 * (app/queue.embedded.ts).
 */
export type MessageReady =
  | ({ message_id: string; sandbox: true } & Pick<QueuePlace, 'tenant_id' | 'queued_at'>)
  | ({ message_id: string; sandbox: false } & QueuePlace);

/** What the fair queue (mta/fair.queue.ts) needs of a live message to give it a place. */
export interface QueuePlace {
  tenant_id: string;
  stream: Stream;
  /** The domain of the first recipient still to deliver to: the message waits for a slot of it. */
  destination: string;
  /** When the message came to the queue (ms since epoch): its place in its tenant's line, kept when it is handed over again. */
  queued_at: number;
}

/** An unsubscribe, as the endpoint (or the inbound MX, for the mailto address) saw it. */
export interface UnsubscribeArgs {
  /** The token's claim, checked against the message's tracking key before anything is recorded. */
  claim: TokenClaim;
  user_agent: string | null;
  ip: string | null;
  /** The one-click POST a mail provider sends (RFC 8058), the confirmation page's form, or mail to the List-Unsubscribe mailto address. */
  via: 'one_click' | 'page' | 'mailto';
}

/** What an unsubscribe came to: `recorded`; `repeat`, recorded already; `refused` (not this message's token). */
export type TrackResult = 'recorded' | 'repeat' | 'refused';

/** What recording an open or a click of the message needs of it: whose it is, and when it was delivered. */
export interface TrackingFacts {
  tenant_id: string;
  to: string;
  /** The time of its last `email.sent`; null before it was delivered (or captured). */
  sent_at: string | null;
  /** What made it (a broadcast), which its opens and clicks carry. */
  origin?: MessageOrigin;
}

/**
 * What a report that came back to the message's return path says (docs/bounces.md): a bounce from
 * a delivery status notification (or a plain-text bounce), or a complaint from an abuse report.
 */
export type LateReport = {
  /** The tenant whose return-path domain the report arrived at: only a message of this tenant's is touched. */
  tenant_id: string;
  /** The stored report (the catalog's `rpt_` row) this came from. */
  report_id: string;
  /** The recipient the report names; null when it names none (or a redacted one). */
  recipient: string | null;
} & (
  | {
      kind: 'bounce';
      source: 'dsn' | 'plain';
      action: 'failed' | 'delayed';
      /** The enhanced status code, `5.1.1`. */
      status: string | null;
      smtp_code: number | null;
      diagnostic: string | null;
      remote_mta: string | null;
    }
  | { kind: 'complaint'; feedback_type: string; user_agent: string | null }
);

/**
 * What a report came to: `recorded` (with the recipient it was about), `repeat` (recorded
 * already: nothing more), or `refused` with why (no such message, not the tenant's, a sandbox
 * message, a recipient the message did not go to).
 */
export type LateReportResult = { result: 'recorded' | 'repeat'; recipient: string } | { result: 'refused'; reason: string };

/** Messages (and their idempotency keys) are kept this long. */
export const RETENTION_MS = 90 * 24 * 3600 * 1000;
