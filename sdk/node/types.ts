// The shapes of Gatepost's native API as the client sends and receives them: the same fields as
// the OpenAPI document (`GET /openapi.json`), written out by hand so the SDK imports nothing of
// the server.

export interface SendRequest {
  /** The sender; defaults to the template's, then the tenant's default sender. */
  from?: string;
  /** The recipient. Required unless the template stores one. */
  to?: string;
  reply_to?: string;
  /** Required unless a template is used. May hold {{placeholders}}. */
  subject?: string;
  /** Required unless a template is used. May hold {{placeholders}} (HTML-escaped). */
  html?: string;
  /** Generated from the html when absent. */
  text?: string;
  /** A template slug: its subject, html and text are used. */
  template?: string;
  /** Merge variables for {{placeholders}}. */
  data?: Record<string, unknown>;
  /** Makes retries safe; the client sends one of its own when none is given. */
  idempotency_key?: string;
  /** ISO 8601, in the future, at most 30 days ahead. */
  send_at?: string;
  stream?: 'transactional' | 'broadcast';
  headers?: Record<string, string>;
  tags?: string[];
}

export interface SendResponse {
  /** msg_… */
  id: string;
  status: 'queued' | 'scheduled';
  to: string;
  created_at: string;
  send_at: string | null;
  /** True for sandbox keys: the message is captured, not delivered. */
  sandbox: boolean;
}

/** A send's answer, and whether it is the replay of an earlier send with the same idempotency key. */
export interface SendResult extends SendResponse {
  replayed: boolean;
}

export interface ErrorBody {
  code: string;
  message: string;
  details?: Array<{ field: string; message: string }>;
}

export type BatchItemResult = (SendResponse & { index: number; replayed: boolean }) | { index: number; error: ErrorBody };

export interface BatchResult {
  /** One per item, in request order. */
  results: BatchItemResult[];
  accepted: number;
  refused: number;
}

export type EventType =
  | 'message.accepted'
  | 'message.scheduled'
  | 'message.queued'
  | 'message.deferred'
  | 'email.sent'
  | 'email.bounced'
  | 'webhook.delivered'
  | 'webhook.failed'
  | (string & {});

/** The event envelope: what a timeline lists, the event feed answers and webhooks deliver. */
export interface Event<D = Record<string, unknown>> {
  /** evt_… */
  id: string;
  type: EventType;
  created_at: string;
  data: D;
}

export type MessageStatus = 'held' | 'scheduled' | 'queued' | 'deferred' | 'sent' | 'bounced';

export interface Message {
  id: string;
  status: MessageStatus;
  from: string;
  to: string;
  subject: string;
  stream: 'transactional' | 'broadcast';
  sandbox: boolean;
  tags: string[];
  idempotency_key: string | null;
  message_id_header: string;
  created_at: string;
  send_at: string | null;
  /** The timeline: every event so far, oldest first. */
  events: Event[];
}

export interface Receipt {
  /** rcp_… */
  id: string;
  /** The compact JWS; its payload is the receipt (verifyReceipt). */
  jws: string;
}

export interface MessageReceipt extends Receipt {
  /** Every receipt of the message, oldest first: one per accepted transaction. `id` and `jws` are the latest. */
  receipts: Array<Receipt & { domain: string | null }>;
}

export interface JsonWebKeySet {
  keys: Array<{ kid: string; kty: string; crv: string; x: string } & Record<string, unknown>>;
}

export interface TemplateFields {
  slug: string;
  name?: string | null;
  subject: string;
  html: string;
  text?: string | null;
  from?: string | null;
  /** A literal recipient (no placeholders), for the browser SDK. */
  to?: string | null;
  reply_to?: string | null;
}

export interface Template {
  /** tpl_… */
  id: string;
  slug: string;
  name: string | null;
  subject: string;
  html: string;
  text: string | null;
  from: string | null;
  to: string | null;
  reply_to: string | null;
  created_at: string;
  updated_at: string;
}

export interface Page<T> {
  data: T[];
  /** Give it as `cursor` for the next page; null on the last. */
  next_cursor: string | null;
}

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

export type SuppressionReason = 'hard_bounce' | 'complaint' | 'unsubscribe' | 'manual';

export interface Suppression {
  address: string;
  reason: SuppressionReason;
  detail: string | null;
  created_at: string;
}

export interface SuppressionCreate {
  address: string;
  /** Default manual. */
  reason?: 'manual' | 'unsubscribe' | 'complaint';
  detail?: string | null;
}

export type ValidationResult = 'deliverable' | 'undeliverable' | 'risky' | 'unknown';

/** POST /v1/validate's answer (docs/validate.md): each check is null where it was not made. */
export interface Validation {
  address: string;
  result: ValidationResult;
  /** Why, as codes: `null_mx`, `suppressed`, `dns_unavailable`, `role_account`, `possible_typo`, … */
  reasons: string[];
  checks: {
    syntax: boolean;
    domain: boolean | null;
    mx: boolean | null;
    null_mx: boolean | null;
    disposable: boolean | null;
    role: boolean | null;
    free_provider: boolean | null;
    suppressed: boolean | null;
  };
  /** The likely intended address when the domain looks like a typo of a common one. */
  suggestion: string | null;
}

export type WebhookEventType =
  'email.sent' | 'email.bounced' | 'email.opened' | 'email.clicked' | 'email.complained' | 'email.unsubscribed' | 'email.inbound';

export interface Webhook {
  /** whk_… */
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: 'manual' | 'gone' | 'failing' | null;
  disabled_at: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A new endpoint, with its signing secret (whsec_…): answered this once. */
export interface WebhookCreated extends Webhook {
  secret: string;
}

export interface WebhookUpdate {
  url?: string;
  events?: WebhookEventType[];
  enabled?: boolean;
}

export interface WebhookDelivery {
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

export interface DnsRecord {
  purpose: 'dkim' | 'spf' | 'dmarc' | 'return_path' | 'inbound_mx' | 'tracking';
  type: 'TXT' | 'MX' | 'CNAME';
  name: string;
  /** What to publish: the TXT text, or the MX or CNAME target host. */
  value: string;
  /** MX only. */
  priority?: number;
  /** Needed for the domain to verify (DKIM and SPF); false: advised. */
  required: boolean;
  status: 'pending' | 'verified' | 'failed';
  /** What the last verification found at the name; null before the first. */
  found: string[] | null;
  error: string | null;
}

export interface Domain {
  /** dom_… */
  id: string;
  name: string;
  status: 'pending' | 'verified';
  records: DnsRecord[];
  /** The host its tracked links use once its CNAME is verified; null: none. */
  tracking_host: string | null;
  checked_at: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A message a sandbox key sent, as captured (rendered). */
export interface CapturedMessage {
  message_id: string;
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  captured_at: string;
}

/** A page of the tenant's event feed (GET /v1/events). */
export interface EventFeedPage {
  /** Oldest first. */
  data: Event[];
  /** Give it as `after` to get the events that follow. */
  cursor: string;
}

/** A list of contacts broadcasts go to. */
export interface Audience {
  /** `aud_…` */
  id: string;
  name: string;
  /** Its contacts, unsubscribed ones included. */
  contacts: number;
  created_at: string;
}

export interface Contact {
  /** `con_…` */
  id: string;
  audience_id: string;
  /** Lower case. */
  email: string;
  name: string | null;
  /** Merge variables. */
  data: Record<string, unknown>;
  /** Set, broadcasts skip the contact. */
  unsubscribed: boolean;
  created_at: string;
  updated_at: string;
}

export interface ContactFields {
  email: string;
  name?: string | null;
  data?: Record<string, unknown>;
  unsubscribed?: boolean;
}

/** A broadcast as drafted: `html` or a `template`, one of the two; `subject` unless the template has one. */
export interface BroadcastFields {
  name: string;
  audience_id: string;
  from: string;
  subject?: string;
  html?: string;
  text?: string;
  template?: string;
  /** Merge variables of every message; each contact's data, email and name win over them. */
  data?: Record<string, unknown>;
  /** Capture every message instead of delivering it. */
  sandbox?: boolean;
}

export type BroadcastStatus = 'draft' | 'scheduled' | 'sending' | 'paused' | 'sent' | 'cancelled';

/** A broadcast as listed. */
export interface BroadcastSummary {
  /** `bro_…` */
  id: string;
  name: string;
  audience_id: string;
  from: string;
  subject: string | null;
  html: string | null;
  text: string | null;
  template: string | null;
  data: Record<string, unknown>;
  sandbox: boolean;
  status: BroadcastStatus;
  send_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A broadcast with its fan-out's progress and its messages' results (null for a draft). */
export interface Broadcast extends BroadcastSummary {
  /** While paused: why (an open reputation breaker, the daily quota), and when it tries again. */
  paused: { reason: string; until: string } | null;
  progress: {
    admitted: number;
    refused: { suppressed: number; unsubscribed: number; other: number };
    started_at: string | null;
    finished_at: string | null;
  } | null;
  /** Each message counted once per kind of event. */
  results: { sent: number; bounced: number; opened: number; clicked: number; unsubscribed: number; complained: number } | null;
}

/** What a CSV import did: rows added and updated (by email), and those refused, with why (the first 100 listed). */
export interface ImportReport {
  added: number;
  updated: number;
  refused_count: number;
  refused: { row: number; email: string; reason: string }[];
}

/** Where mail to a match goes (docs/inbound.md). */
export interface InboundRoute {
  /** `rte_…` */
  id: string;
  /** `user@domain`, `*@domain` or a local part with `*` wildcards; lower case. */
  match: string;
  domain: string;
  action: 'webhook' | 'store';
  /** The one endpoint posted to; null: every endpoint subscribed to `email.inbound`. */
  endpoint_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface InboundRouteFields {
  match: string;
  /** Default webhook: post `email.inbound`; store: keep the message only. */
  action?: 'webhook' | 'store';
  endpoint_id?: string | null;
}

/** A message the inbound MX received: its envelope, and every field of its `email.inbound` payload. */
export interface InboundMessage extends Record<string, unknown> {
  /** `inm_…` */
  id: string;
  route_id: string;
  /** The envelope sender; '' for the null sender. */
  mail_from: string;
  rcpt_to: string[];
  remote_address: string;
  received_at: string;
  size: number;
}

/** An attachment of a received message, downloaded. */
export interface InboundAttachment {
  /** As the message named it (characters outside printable ASCII replaced by `_`), or null. */
  filename: string | null;
  /** As Gatepost serves it: the part's own type. */
  content_type: string;
  content: Uint8Array;
}

export interface BreakerWindow {
  sample: number;
  sent: number;
  hard_bounces: number;
  blocks: number;
  complaints: number;
  bounce_rate: number;
  complaint_rate: number;
  block_rate: number;
}

/** A reputation breaker: closed (mail goes as usual), warning, open (broadcasts wait, transactional mail trickles) or half_open. */
export interface Breaker {
  status: 'closed' | 'warning' | 'open' | 'half_open';
  since: string;
  reason: string | null;
  window: BreakerWindow;
  half_open_at: string | null;
}

/** The tenant's breaker, and each sending domain's. */
export interface Reputation extends Breaker {
  domains: Array<Breaker & { domain: string }>;
}

/** The tenant's mail waiting for one destination's delivery slots. */
export interface QueueEntry {
  tenant_id: string;
  destination: string;
  waiting: number;
  in_flight: number;
  oldest_age_seconds: number;
}

/** A bounce or complaint received at a return-path domain, recognised or not. */
export interface Report {
  /** `rpt_…` */
  id: string;
  rcpt: string;
  mail_from: string;
  remote_address: string;
  received_at: string;
  kind: 'dsn' | 'arf' | 'plain' | 'unknown';
  outcome: 'recorded' | 'repeat' | 'unrecognised';
  message_id: string | null;
  reason: string | null;
  findings: Record<string, unknown>;
  excerpt: string | null;
  size: number;
}

/** What starts an automation's runs (docs/automations.md#triggers). */
export type AutomationTrigger =
  | { type: 'contact_added' }
  | {
      type: 'email_event';
      event: 'email.sent' | 'email.bounced' | 'email.opened' | 'email.clicked' | 'email.complained' | 'email.unsubscribed';
    }
  | { type: 'custom_event'; name: string };

/** A step as written; an automation read back gives each wait its `seconds` too. */
export type AutomationStep =
  | { id: string; type: 'wait'; duration: string | number; seconds?: number }
  | { id: string; type: 'send'; template: string; from: string; subject?: string }
  | { id: string; type: 'if'; opened?: string; clicked?: string; then?: string; else?: string };

export interface AutomationCreate {
  name: string;
  audience_id: string;
  trigger: AutomationTrigger;
  steps: AutomationStep[];
  /** Capture every send in the sandbox inbox, deliver none. */
  sandbox?: boolean;
}

export interface Automation extends Required<AutomationCreate> {
  /** `aut_…` */
  id: string;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export type AutomationRunStatus = 'running' | 'waiting' | 'completed' | 'stopped' | 'failed';

/** A run as the list of an automation's runs shows it. */
export interface AutomationRunListed {
  /** `run_…` */
  id: string;
  automation_id: string;
  contact_id: string;
  email: string;
  status: AutomationRunStatus;
  /** Why it stopped or failed. */
  reason: string | null;
  started_at: string;
  updated_at: string;
}

/** A run with its timeline. */
export interface AutomationRun extends AutomationRunListed {
  trigger: { type: AutomationTrigger['type']; event_id: string; name?: string };
  data: Record<string, unknown>;
  timeline: {
    at: string;
    type: 'run.started' | 'step.waiting' | 'step.sent' | 'step.condition' | 'run.completed' | 'run.stopped' | 'run.failed';
    step: string | null;
    data: Record<string, unknown>;
  }[];
}

/** A custom event (POST /v1/events): it starts the runs of the automations its name triggers. */
export interface CustomEvent {
  name: string;
  /** The contact it is about. */
  email: string;
  data?: Record<string, unknown>;
  /** The same key again is the same event: it starts nothing twice. */
  idempotency_key?: string;
}
