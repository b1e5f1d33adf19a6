// What the service counts, as plain functions called where the event happens: admission in
// gate/, delivery attempts in actors/delivery, webhook attempts in actors/webhook. The Prometheus
// implementation is ops/metrics.prom.ts; code that is given none counts nothing (`uncounted`).

/** What became of one send at the gate. `failed`: not a refusal but a fault of ours (a store error). */
export type SendOutcome = 'accepted' | 'replayed' | 'refused' | 'failed';

/** What one delivery transaction (one recipient domain of an attempt) or a sandbox capture came to. */
export type DeliveryResult = 'sent' | 'bounced' | 'deferred' | 'captured';

/** What one webhook attempt came to: a 2xx, anything else (an error, a timeout), or no request (endpoint deleted or disabled). */
export type WebhookResult = 'delivered' | 'failed' | 'skipped';

export interface Metrics {
  /** A send that came through the gate, by its ingress (`api`, `smtp`, `style_p`, …). */
  send(ingress: string, outcome: SendOutcome): void;
  /** A refusal at admission, by its error code (`recipient_suppressed`, `quota_exceeded`, …). */
  refusal(code: string): void;
  /** One delivery transaction and how long it took, in seconds. */
  delivery(result: DeliveryResult, seconds: number): void;
  /** One webhook attempt and how long its request took, in seconds. */
  webhook(result: WebhookResult, seconds: number): void;
}

/** Counts nothing: for code started without metrics (unit tests, tools). */
export const uncounted: Metrics = {
  send() {},
  refusal() {},
  delivery() {},
  webhook() {},
};

/** Where structured lines go (a pino logger fits): fields first, then the message. */
export interface EventLog {
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

/** Logs nothing. */
export const unlogged: EventLog = { info() {}, debug() {} };
