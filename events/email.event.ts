// The events a message's timeline records, which of them are lifecycle events pushed to customers
// (spec part 6), the envelope every event travels in (spec part 2), and the topic lifecycle
// events are published on.

/** Lifecycle events (spec part 6), each an EmailEvent, for webhook delivery. */
export const EMAIL_EVENTS = 'email.events';

/** Timeline events. The `email.*` kinds of spec part 6 are also published for webhooks. */
export type EventType =
  | 'message.accepted'
  | 'message.scheduled'
  | 'message.queued'
  | 'message.deferred'
  | 'email.sent'
  | 'email.bounced'
  | 'email.complained'
  | 'email.opened'
  | 'email.clicked'
  | 'email.unsubscribed'
  | 'email.complained'
  | 'tenant.reputation_changed'
  | 'webhook.delivered'
  | 'webhook.failed';

/** Event kinds pushed to customers (spec part 6); the others stay on the timeline. */
export const LIFECYCLE_EVENTS: ReadonlySet<EventType> = new Set([
  'email.sent',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.unsubscribed',
]);

/** The event envelope of spec part 2: what the timeline lists and webhooks deliver. */
export interface EventEnvelope {
  id: string;
  type: EventType;
  created_at: string;
  data: { message_id: string } & Record<string, unknown>;
}

/** An event about a tenant, not about a message (tenant.reputation_changed): its data has no message id. */
export interface TenantEventEnvelope {
  id: string;
  type: 'tenant.reputation_changed';
  created_at: string;
  data: { tenant_id: string } & Record<string, unknown>;
}

/** Any event on the `email.events` topic: about a message, or about its tenant. */
export type PublishedEnvelope = EventEnvelope | TenantEventEnvelope;

/** An event as its message's record keeps it: the envelope without the message id, which is the record's. */
export interface StoredEvent {
  id: string;
  type: EventType;
  created_at: string;
  data: Record<string, unknown>;
}

/** The envelope of a stored event of message `messageId`. */
export function envelopeOf(messageId: string, event: StoredEvent): EventEnvelope {
  return { ...event, data: { message_id: messageId, ...event.data } };
}

/** A message's timeline, every event in its envelope, oldest first. */
export function timelineOf(message: { id: string; events: StoredEvent[] }): EventEnvelope[] {
  return message.events.map((e) => envelopeOf(message.id, e));
}

/** Event kinds a webhook endpoint may subscribe to (spec part 6). */
export const WEBHOOK_EVENT_TYPES = [
  'email.sent',
  'email.bounced',
  'email.opened',
  'email.clicked',
  'email.complained',
  'email.unsubscribed',
  'email.inbound',
  'tenant.reputation_changed',
] as const;

/** The type of the event POST /v1/webhooks/:id/test sends (not subscribable: every endpoint gets it when asked). */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The event envelope of spec part 2, as a webhook delivers it (any event type, the test event too). */
export interface WebhookEnvelope {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/**
 * What made a message besides a request to send it: a broadcast's fan-out to one contact of its
 * audience. The message keeps it, and each of its lifecycle events carries it, so that what
 * consumes them can count them for the broadcast (actors/broadcast/broadcast.feed.ts).
 */
export interface MessageOrigin {
  kind: 'broadcast';
  /** The broadcast, `bro_…`. */
  id: string;
  audience_id: string;
  contact_id: string;
}

/** What is published on `email.events` for each lifecycle event: the envelope, whose it is, and what made its message. */
export interface EmailEvent {
  tenant_id: string;
  event: PublishedEnvelope;
  origin?: MessageOrigin;
}

/**
 * Opens and clicks, many messages' at a time, published by the tracking recorder
 * (gate/tracking.recorder.ts): each is stored apart from its message's actor, then handled as a
 * lifecycle event on `email.events` is (webhooks, the event feed).
 */
export const ENGAGEMENT_EVENTS = 'email.engagement';

/** An open or a click of a message, kept apart from its actor's timeline (docs/tracking.md). */
export interface EngagementEvent {
  tenant_id: string;
  message_id: string;
  event: StoredEvent;
  /** What made the message (a broadcast), carried on to the lifecycle event as `EmailEvent.origin`. */
  origin?: MessageOrigin;
}

/** What is published on `email.engagement`: events in the order they happened. */
export interface EngagementBatch {
  events: EngagementEvent[];
}
