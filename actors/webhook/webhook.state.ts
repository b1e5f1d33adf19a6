// The state a WebhookActor (one per endpoint, id = the whk_ id) keeps: each event it owes the
// endpoint under `e:<evt id>`, the last LOG_SIZE attempts in a ring of `log:<n>` keys, and `meta`
// (how many attempts were logged, and since when the endpoint has been failing). One key per
// event, not one list, so a turn writes only what it changes, however many events wait.

import type { WebhookEnvelope } from '../../events/email.event.ts';
import type { messageActor } from '../message/message.actor.ts';

type MessageMethods = (typeof messageActor)['methods'];

/** Published when an event is due for an attempt: `{ endpoint_id, event_id }` (a WebhookDue). */
export const WEBHOOK_DUE = 'webhook.due';

/** Spec part 8: at most 15 attempts per event. */
export const MAX_ATTEMPTS = 15;

export interface WebhookDue {
  endpoint_id: string;
  event_id: string;
}

export type EventStatus = 'pending' | 'in_flight' | 'delivered' | 'failed';

/** What the message's timeline is told about a final outcome: MessageActor.recordWebhook's argument, and which message. */
export type TimelineNote = Parameters<MessageMethods['recordWebhook']>[1] & { message_id: string };

export interface EventState {
  tenant_id: string;
  /** The envelope; dropped once delivered (what is left only deduplicates). */
  event: WebhookEnvelope | null;
  status: EventStatus;
  attempts: number;
  /** 15, or fewer when the retry schedule is shorter; attempts + 1 for a redelivery by hand. */
  max_attempts: number;
  /** pending: when the next attempt is due. */
  next_at: number;
  /** in_flight: after this, the attempt is taken to have died with its process. */
  lease_until: number | null;
  /** delivered or failed: when this state goes. */
  keep_until: number | null;
  /** A final outcome the message's timeline could not be told yet. */
  untold?: TimelineNote;
}

/** One attempt, as GET /v1/webhooks/:id/deliveries lists it. */
export interface AttemptLogEntry {
  event_id: string;
  event_type: string;
  attempt: number;
  at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  result: 'delivered' | 'retrying' | 'failed';
  next_attempt_at: string | null;
}

export interface WebhookMeta {
  /** Attempts logged so far; the ring slot of attempt n is n % LOG_SIZE. */
  logged: number;
  /** When the first failure since the last success happened (ms), or null. */
  failing_since: number | null;
}

/** What an attempt came to, told to `finish`. */
export interface AttemptOutcome {
  event_id: string;
  attempt: number;
  at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  retry_after_ms: number | null;
  /** No request was made: the endpoint is deleted or disabled. */
  skipped?: 'deleted' | 'disabled';
}

/** What `begin` hands the attempt: the envelope and its attempt number. */
export interface BegunAttempt {
  tenant_id: string;
  event: WebhookEnvelope;
  attempt: number;
}

export const LOG_SIZE = 100;
/** A queued event whose attempt has not begun this long after it was due is published again (then 2×, up to an hour). */
export const WATCH_MS = 30_000;
export const MAX_WATCH_MS = 3_600_000;
/** How long past the HTTP deadline an attempt may still be under way before it counts as cut short. */
export const LEASE_MARGIN_MS = 30_000;
/** A delivered event is remembered this long, to drop duplicate publications of it. */
export const KEEP_DELIVERED_MS = 24 * 3_600_000;
/** A failed event is kept this long, for redelivery by hand. */
export const KEEP_FAILED_MS = 30 * 24 * 3_600_000;
/** A Retry-After is honoured up to this long. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
/** Waits are spread by up to ±20% so that retries of many events do not arrive together. */
export const JITTER = 0.2;

export const eventKey = (eventId: string) => `e:${eventId}`;
export const logKey = (n: number) => `log:${n % LOG_SIZE}`;
