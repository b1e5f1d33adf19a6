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
  | 'webhook.delivered'
  | 'webhook.failed';

/** Event kinds pushed to customers (spec part 6); the others stay on the timeline. */
export const LIFECYCLE_EVENTS: ReadonlySet<EventType> = new Set(['email.sent', 'email.bounced']);

/** The event envelope of spec part 2: what the timeline lists and webhooks deliver. */
export interface EventEnvelope {
  id: string;
  type: EventType;
  created_at: string;
  data: { message_id: string } & Record<string, unknown>;
}

/** What is published on `email.events` for each lifecycle event: the envelope, and whose it is. */
export interface EmailEvent {
  tenant_id: string;
  event: EventEnvelope;
}
