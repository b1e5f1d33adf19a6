// Lifecycle events to webhook endpoints: each event published on `email.events` goes to the
// actor of every enabled endpoint subscribed to it (enqueue is idempotent by evt_ id: pub/sub may
// deliver twice), and the attempts run in this process's lanes. A `webhook.due` publication (a
// retry, a test event, a watchdog) puts its event in the lanes too.
import type { ActorRuntime } from '../../runtime/runtime.port.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { SsrfGuard } from '../../webhooks/ssrf.guard.ts';
import { WebhookPoster } from '../../webhooks/webhook.http.ts';
import { EMAIL_EVENTS } from '../message/message.actor.ts';
import type { EmailEvent } from '../message/message.state.ts';
import { webhookClient } from './webhook.actor.ts';
import { PER_ENDPOINT, WebhookLanes } from './webhook.lanes.ts';
import { WEBHOOK_DUE, type WebhookDue } from './webhook.state.ts';

export interface FanOutDeps {
  catalog: Catalog;
  guard: SsrfGuard;
  /** One attempt's deadline, ms. */
  timeoutMs: number;
  log: (message: string, error?: unknown) => void;
}

/** Subscribes the fan-out; `drain` lets the attempts under way end and closes their connections. */
export function fanOutWebhooks(runtime: ActorRuntime, deps: FanOutDeps): { drain(): Promise<void> } {
  const { catalog } = deps;
  const poster = new WebhookPoster(deps.guard, { socketsPerDestination: PER_ENDPOINT });
  const lanes = new WebhookLanes({ invoker: runtime, catalog, poster, timeoutMs: deps.timeoutMs, log: deps.log });

  runtime.subscribe(EMAIL_EVENTS, async ({ data }) => {
    const { tenant_id, event } = data as EmailEvent;
    const endpoints = await catalog.webhooksFor(tenant_id, event.type);
    await Promise.all(
      endpoints.map(async (e) => {
        // Handed straight to this process's lanes: no publication, one commit less per delivery.
        const { enqueued } = await webhookClient(runtime, e.id).enqueue({ tenant_id, event, publish: false });
        // Draining, the lanes take nothing: the event's watchdog reminder brings it back.
        if (enqueued && !lanes.draining) lanes.push(e.id, event.id);
      }),
    );
  });
  runtime.subscribe(WEBHOOK_DUE, async ({ data }) => {
    const { endpoint_id, event_id } = data as WebhookDue;
    lanes.push(endpoint_id, event_id);
  });

  return {
    async drain() {
      await lanes.drain();
      poster.close();
    },
  };
}
