// A broadcast's results, from its messages' lifecycle events: each event of a message a broadcast
// made (its `origin`) is counted in the catalog for the broadcast, once per message and kind, so
// an event delivered twice (pub/sub is at-least-once) counts once. An unsubscribe, or a complaint,
// also marks the message's contact unsubscribed in its audience, so later broadcasts skip it. The
// webhook fan-out (actors/webhook/fanout.ts) hands each event to this, as to the breaker's feed.
import type { EmailEvent, EventType } from '../../events/email.event.ts';
import type { BroadcastEventKind, Catalog } from '../../store/catalog.port.ts';

const KINDS: Partial<Record<EventType, BroadcastEventKind>> = {
  'email.sent': 'sent',
  'email.bounced': 'bounced',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.unsubscribed': 'unsubscribed',
  'email.complained': 'complained',
};

/** What hears each published event for broadcasts; throws (and the event comes again) when the catalog cannot be written. */
export function broadcastListener(catalog: Catalog): (e: EmailEvent) => Promise<void> {
  return async ({ tenant_id, event, origin }) => {
    const kind = KINDS[event.type];
    // Only a message's events have an origin (a tenant's breaker event has neither).
    if (origin?.kind !== 'broadcast' || !kind || typeof event.data.message_id !== 'string') return;
    if (kind === 'unsubscribed' || kind === 'complained') {
      await catalog.updateContact(tenant_id, origin.audience_id, origin.contact_id, { unsubscribed: true });
    }
    await catalog.countBroadcastEvent({ broadcast_id: origin.id, kind, message_id: event.data.message_id });
  };
}
