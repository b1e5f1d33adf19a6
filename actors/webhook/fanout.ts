// Lifecycle events to webhook endpoints: each event published on `email.events` goes to the
// actor of every enabled endpoint subscribed to it (enqueue is idempotent by evt_ id: pub/sub may
// deliver twice), and the attempts run in this process's lanes (webhooks/webhook.lanes.ts). A
// `webhook.due` publication (a retry, a test event, a watchdog) puts its event in the lanes too.
// An attempt is begin (a turn), the signed request (no turn), finish (a turn). Opens and clicks
// are published many at a time on `email.engagement` (gate/tracking.recorder.ts): each group is
// stored first (the messages' timelines read it), then each event handled as one on `email.events`.
import type { ActorRuntime } from '../../runtime/runtime.port.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import {
  EMAIL_EVENTS,
  ENGAGEMENT_EVENTS,
  envelopeOf,
  type EmailEvent,
  type EngagementBatch,
  type PublishedEnvelope,
} from '../../events/email.event.ts';
import type { SsrfGuard } from '../../webhooks/ssrf.guard.ts';
import { WebhookPoster } from '../../webhooks/webhook.http.ts';
import { PER_ENDPOINT, WebhookLanes } from '../../webhooks/webhook.lanes.ts';
import { signatureHeaders, signingSecrets } from '../../webhooks/webhook.signing.ts';
import { uncounted, type Metrics, type WebhookResult } from '../../ops/metrics.port.ts';
import { isSuccess, webhookClient } from './webhook.actor.ts';
import { WEBHOOK_DUE, type AttemptOutcome, type BegunAttempt, type WebhookDue } from './webhook.state.ts';

export interface FanOutDeps {
  catalog: Catalog;
  guard: SsrfGuard;
  /** One attempt's deadline, ms. */
  timeoutMs: number;
  log: (message: string, error?: unknown) => void;
  /** Also given every event: the tenant event feed (GET /v1/events). */
  feed?: { push(tenantId: string, event: PublishedEnvelope): void };
  /** Counts each attempt by outcome, with its request's duration. */
  metrics?: Metrics;
  /** Also hears every event, once its webhooks have it: the reputation breaker (actors/tenant/reputation.feed.ts). */
  listener?: (event: EmailEvent) => Promise<void>;
}

/** What an attempt came to, as the metrics name it: a 2xx is delivered, no request at all skipped. */
function resultOf(o: AttemptOutcome): WebhookResult {
  if (o.skipped) return 'skipped';
  return isSuccess(o.status_code) ? 'delivered' : 'failed';
}

/** Subscribes the fan-out; `drain` lets the attempts under way end and closes their connections. */
export function fanOutWebhooks(runtime: ActorRuntime, deps: FanOutDeps): { drain(): Promise<void> } {
  const { catalog } = deps;
  const metrics = deps.metrics ?? uncounted;
  const poster = new WebhookPoster(deps.guard, { socketsPerDestination: PER_ENDPOINT });

  async function send(endpointId: string, { tenant_id, event, attempt }: BegunAttempt): Promise<AttemptOutcome> {
    const base = {
      event_id: event.id,
      attempt,
      at: new Date().toISOString(),
      duration_ms: 0,
      status_code: null,
      retry_after_ms: null,
    };
    const endpoint = await catalog.getWebhook(tenant_id, endpointId);
    if (!endpoint) return { ...base, error: 'the endpoint was deleted', skipped: 'deleted' };
    if (!endpoint.enabled) {
      return { ...base, error: `the endpoint is disabled (${endpoint.disabled_reason ?? 'manual'})`, skipped: 'disabled' };
    }
    const body = JSON.stringify(event);
    const headers = signatureHeaders({
      eventId: event.id,
      eventType: event.type,
      body,
      secrets: signingSecrets(endpoint),
      timestamp: Math.floor(Date.now() / 1000),
    });
    const answer = await poster.post({ pool: endpointId, url: endpoint.url, body, headers, timeoutMs: deps.timeoutMs });
    return {
      ...base,
      duration_ms: answer.durationMs,
      status_code: answer.status,
      error: answer.error,
      retry_after_ms: answer.retryAfterMs,
    };
  }

  const lanes = new WebhookLanes({
    async attempt(endpointId, eventId) {
      const client = webhookClient(runtime, endpointId);
      const begun = await client.begin({ event_id: eventId });
      if (!begun) return;
      const outcome = await send(endpointId, begun);
      metrics.webhook(resultOf(outcome), outcome.duration_ms / 1000);
      await client.finish(outcome);
    },
    log: deps.log,
  });

  async function hear(published: EmailEvent): Promise<void> {
    const { tenant_id, event } = published;
    deps.feed?.push(tenant_id, event);
    const endpoints = await catalog.webhooksFor(tenant_id, event.type);
    await Promise.all(
      endpoints.map(async (e) => {
        // Handed straight to this process's lanes: no publication, one commit less per delivery.
        const { enqueued } = await webhookClient(runtime, e.id).enqueue({ tenant_id, event, publish: false });
        // Draining, the lanes take nothing: the event's watchdog reminder brings it back.
        if (enqueued && !lanes.draining) lanes.push(e.id, event.id);
      }),
    );
    // Told after the webhooks: should it throw, the event comes again, and enqueueing it is idempotent.
    await deps.listener?.(published);
  }
  runtime.subscribe(EMAIL_EVENTS, ({ data }) => hear(data as EmailEvent));
  runtime.subscribe(ENGAGEMENT_EVENTS, async ({ data }) => {
    const { events } = data as EngagementBatch;
    // Stored once however often the group comes; in order, so webhooks are told in the order the hits came.
    await catalog.recordEngagement(events);
    for (const e of events)
      await hear({ tenant_id: e.tenant_id, event: envelopeOf(e.message_id, e.event), ...(e.origin ? { origin: e.origin } : {}) });
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
