// The Prometheus implementation of ops/metrics.port.ts: one registry per Gatepost (no global,
// so two can run in one process), Node's own process metrics, and the queue read at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DeliveryResult, Metrics, SendOutcome, WebhookResult } from './metrics.port.ts';

/** Messages of one tenant waiting in one state, and how long the oldest due one has waited. */
export interface TenantQueue {
  tenant_id: string;
  /** Scheduled for later (`send_at`). */
  scheduled: number;
  /** Handed over, not yet taken by delivery. */
  ready: number;
  /** Deferred, waiting for a retry. */
  deferred: number;
  /** How long the oldest ready or deferred message has waited, in seconds (a ready one since it came to the queue, a deferred one since it was created); 0 when none is. */
  oldest_age_seconds: number;
}

/** The fair queue's messages for one destination (a recipient domain), summed over tenants. */
export interface DestinationQueue {
  destination: string;
  waiting: number;
  in_flight: number;
}

/** A tenant's reputation breaker (docs/deliverability.md). */
export interface TenantBreaker {
  tenant_id: string;
  status: 'closed' | 'warning' | 'open' | 'half_open';
}

/** The breaker's gauge values, in the order a breaker goes through them. */
const BREAKER_VALUES: Record<TenantBreaker['status'], number> = { closed: 0, warning: 1, open: 2, half_open: 3 };

export interface PromMetrics extends Metrics {
  /** The text a scrape answers, and its content type. */
  scrape(): Promise<{ text: string; contentType: string }>;
}

/** SMTP transactions: a loopback relay answers in milliseconds, a slow MX host in minutes. */
const DELIVERY_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Webhook requests: up to the 15 s default deadline. */
const WEBHOOK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15];

/**
 * A metric's child per label values, made once: counting is then one lookup and an add, with no
 * labels object built on every call.
 */
function childrenOf<C>(make: (...values: string[]) => C): (a: string, b?: string) => C {
  const made = new Map<string, Map<string, C>>();
  return (a, b = '') => {
    let row = made.get(a);
    if (!row) made.set(a, (row = new Map()));
    let child = row.get(b);
    if (!child) row.set(b, (child = b === '' ? make(a) : make(a, b)));
    return child;
  };
}

/** Calls between the app and its Dapr sidecar of one kind and target, counted since the start. */
export interface SidecarCalls {
  kind: string;
  target: string;
  count: number;
}

/**
 * `queue`: the waiting messages per tenant, read when scraped; null where the runtime cannot tell
 * them cheaply (Dapr), and then the queue's metrics are left out. `fairQueue`: this process's fair
 * queue per destination, null where it hosts no actors. `breakers`: every tenant's breaker, read
 * when scraped (on Dapr from the catalog's mirror); null where none are gauged. `daprCalls`: the calls between
 * the app and its sidecar, read when scraped; null on the embedded runtime.
 */
export function promMetrics(opts: {
  queue: (() => Promise<TenantQueue[]>) | null;
  fairQueue?: (() => DestinationQueue[]) | null;
  breakers?: (() => TenantBreaker[] | Promise<TenantBreaker[]>) | null;
  daprCalls?: (() => SidecarCalls[]) | null;
}): PromMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const sends = new Counter({
    name: 'gatepost_sends_total',
    help: 'Sends that came through the admission gate, by ingress and outcome (accepted, replayed, refused, failed).',
    labelNames: ['ingress', 'outcome'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'gatepost_admission_refusals_total',
    help: 'Refusals at admission, by error code.',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  const deliveries = new Histogram({
    name: 'gatepost_delivery_attempt_duration_seconds',
    help: 'Delivery transactions (one per recipient domain of an attempt; a sandbox capture is one) and how long each took, by outcome (sent, bounced, deferred, captured).',
    labelNames: ['outcome'] as const,
    buckets: DELIVERY_BUCKETS,
    registers: [registry],
  });
  const webhooks = new Histogram({
    name: 'gatepost_webhook_attempt_duration_seconds',
    help: 'Webhook attempts and how long each request took, by outcome (delivered, failed, skipped).',
    labelNames: ['outcome'] as const,
    buckets: WEBHOOK_BUCKETS,
    registers: [registry],
  });
  const read = opts.queue;
  if (read) {
    // Both gauges are set from one read of the queue, made by whichever is collected first.
    let last: { at: number; rows: Promise<TenantQueue[]> } | null = null;
    const rows = () => {
      if (!last || Date.now() - last.at > 1_000) last = { at: Date.now(), rows: read() };
      return last.rows;
    };
    const depth: Gauge<'tenant' | 'state'> = new Gauge({
      name: 'gatepost_queue_messages',
      help: 'Messages waiting, per tenant and state: scheduled (send_at later), ready (handed over, not yet taken by delivery), deferred (waiting for a retry).',
      labelNames: ['tenant', 'state'] as const,
      registers: [registry],
      async collect() {
        const queue = await rows();
        depth.reset();
        for (const q of queue) {
          for (const state of ['scheduled', 'ready', 'deferred'] as const) depth.set({ tenant: q.tenant_id, state }, q[state]);
        }
      },
    });
    const oldest: Gauge<'tenant'> = new Gauge({
      name: 'gatepost_queue_oldest_age_seconds',
      help: 'Per tenant, seconds the oldest ready or deferred message has waited: a ready one since it came to the queue (at its send_at, if it had one), a deferred one since it was created.',
      labelNames: ['tenant'] as const,
      registers: [registry],
      async collect() {
        const queue = await rows();
        oldest.reset();
        for (const q of queue) oldest.set({ tenant: q.tenant_id }, q.oldest_age_seconds);
      },
    });
  }

  const fair = opts.fairQueue;
  if (fair) {
    const slots: Gauge<'destination' | 'state'> = new Gauge({
      name: 'gatepost_delivery_queue_messages',
      help: "Messages in this process's fair queue per destination (recipient domain): waiting for a delivery slot, or in flight.",
      labelNames: ['destination', 'state'] as const,
      registers: [registry],
      collect() {
        slots.reset();
        for (const d of fair()) {
          slots.set({ destination: d.destination, state: 'waiting' }, d.waiting);
          slots.set({ destination: d.destination, state: 'in_flight' }, d.in_flight);
        }
      },
    });
  }
  const readBreakers = opts.breakers;
  if (readBreakers) {
    const breakers: Gauge<'tenant'> = new Gauge({
      name: 'gatepost_reputation_breaker_state',
      help: "Each tenant's reputation breaker: 0 closed, 1 warning, 2 open, 3 half-open.",
      labelNames: ['tenant'] as const,
      registers: [registry],
      async collect() {
        const now = await readBreakers();
        breakers.reset();
        for (const b of now) breakers.set({ tenant: b.tenant_id }, BREAKER_VALUES[b.status]);
      },
    });
  }
  const calls = opts.daprCalls;
  if (calls) {
    const total: Counter<'kind' | 'target'> = new Counter({
      name: 'gatepost_dapr_calls_total',
      help: 'Calls between this app and its Dapr sidecar, by kind (actor_invocation, state_read, state_transaction, reminder_registered, reminder_deleted, publish; served the other way: actor_call_served, reminder_fired, publication_received; and actor_call_local, a call to an actor daprd placed on this app, run without the sidecar) and target (Type.method, actor type or topic).',
      labelNames: ['kind', 'target'] as const,
      registers: [registry],
      collect() {
        total.reset();
        for (const c of calls()) total.inc({ kind: c.kind, target: c.target }, c.count);
      },
    });
  }

  const sendChild = childrenOf((ingress, outcome) => sends.labels(ingress!, outcome!));
  const refusalChild = childrenOf((code) => refusals.labels(code!));
  const deliveryChild = childrenOf((outcome) => deliveries.labels(outcome!));
  const webhookChild = childrenOf((outcome) => webhooks.labels(outcome!));

  return {
    send: (ingress: string, outcome: SendOutcome) => sendChild(ingress, outcome).inc(),
    refusal: (code: string) => refusalChild(code).inc(),
    delivery: (result: DeliveryResult, seconds: number) => deliveryChild(result).observe(seconds),
    webhook: (result: WebhookResult, seconds: number) => webhookChild(result).observe(seconds),
    async scrape() {
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
  };
}
