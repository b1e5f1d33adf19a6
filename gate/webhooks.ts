// What the webhook API asks of an endpoint's actor: its delivery log, a test event, a redelivery
// by hand, and being reset or forgotten. The endpoint's row itself is the catalog's.
import type { Invoker } from '../runtime/runtime.port.ts';
import type { WebhookEnvelope } from '../events/email.event.ts';
import { LOG_SIZE, webhookClient } from '../actors/webhook/webhook.actor.ts';
import type { AttemptLogEntry } from '../actors/webhook/webhook.state.ts';

/** How many delivery attempts an endpoint's log keeps. */
export const DELIVERY_LOG_SIZE = LOG_SIZE;

export type { AttemptLogEntry };

export interface WebhookDeliveries {
  /** The last `limit` attempts at endpoint `id`, newest first. */
  deliveries(id: string, limit: number): Promise<AttemptLogEntry[]>;
  /** Queues `event` for endpoint `id`, delivered, signed and retried like any other. */
  enqueue(id: string, tenantId: string, event: WebhookEnvelope): Promise<void>;
  /** One more attempt of a failed event, now; `not_found` or `webhook_delivery_not_failed` otherwise. */
  redeliver(id: string, eventId: string): Promise<void>;
  /** The endpoint is enabled (again): its failures so far no longer count towards disabling it. */
  reset(id: string): Promise<void>;
  /** The endpoint is deleted: what it was owed is dropped. */
  forget(id: string): Promise<void>;
}

export function webhookDeliveries(invoker: Invoker): WebhookDeliveries {
  return {
    deliveries: (id, limit) => webhookClient(invoker, id).deliveries({ limit }),
    enqueue: async (id, tenantId, event) => {
      await webhookClient(invoker, id).enqueue({ tenant_id: tenantId, event });
    },
    redeliver: async (id, eventId) => {
      await webhookClient(invoker, id).redeliver({ event_id: eventId });
    },
    reset: (id) => webhookClient(invoker, id).reset(undefined),
    forget: (id) => webhookClient(invoker, id).forget(undefined),
  };
}
