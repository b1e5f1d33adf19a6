// The catalog: tenants, API keys, templates, webhook endpoints, sending domains, receipt signing keys, inbound routes and received mail, and the queryable indexes that actors feed
// (suppression list, sandbox capture inbox, opens and clicks). One interface; SQLite (embedded)
// and PostgreSQL (cluster) implement it. Methods are async so both can.
import type { EngagementEvent, StoredEvent } from '../events/email.event.ts';

export type { EngagementEvent };

export type KeyKind = 'live' | 'sandbox' | 'public';

/**
 * What a key may do beyond its kind (tenancy/permissions.ts): `full_access` manages resources,
 * `sending_access` sends and reads messages. Only a live key may have full access.
 */
export type KeyScope = 'full_access' | 'sending_access';

export interface Quota {
  /** Sends per second; null: no limit. */
  per_second: number | null;
  /** Sends per UTC day; null: no limit. */
  per_day: number | null;
}

export interface Tenant {
  id: string;
  name: string;
  default_from: string | null;
  quota: Quota;
  /** The tenant's share of each destination's slots in the fair queue (mta/fair.queue.ts), > 0; 1 by default. */
  queue_weight: number;
  created_at: string;
}

export interface ApiKey {
  id: string;
  tenant_id: string;
  kind: KeyKind;
  scope: KeyScope;
  /** Its sends are captured, never delivered: every sandbox key, and a public key made to try the browser SDK out. */
  sandbox: boolean;
  name: string | null;
  /** The first characters of the key, enough to recognise it; the key itself is never stored. */
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  /**
   * The origins (`https://shop.example`) a page may send from with this key through the browser
   * SDK endpoints; empty: any origin. Only public and sandbox keys are used from a browser.
   */
  allowed_origins: string[];
  /** Browser SDK sends per minute, for the whole key and for each client IP; null: the defaults. */
  rate_limit: BrowserRateLimit;
}

export interface BrowserRateLimit {
  per_key: number | null;
  per_ip: number | null;
}

/** A key to store: by default a live key has full access, only a sandbox key captures, and browser settings are open. */
export type NewKey = Omit<ApiKey, 'created_at' | 'revoked_at' | 'scope' | 'sandbox' | 'allowed_origins' | 'rate_limit'> &
  Partial<Pick<ApiKey, 'scope' | 'sandbox' | 'allowed_origins' | 'rate_limit'>>;

/** The record of a key as issued, with NewKey's defaults. */
export function keyRecord(k: NewKey, created_at: string): ApiKey {
  const {
    scope = k.kind === 'live' ? 'full_access' : 'sending_access',
    sandbox = k.kind === 'sandbox',
    allowed_origins = [],
    rate_limit = { per_key: null, per_ip: null },
    ...fields
  } = k;
  return { ...fields, scope, sandbox, created_at, revoked_at: null, allowed_origins, rate_limit };
}

/** What can change on a key after it is issued. */
export type KeySettings = Pick<ApiKey, 'name' | 'allowed_origins' | 'rate_limit'>;

export interface Template {
  id: string;
  tenant_id: string;
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

export type TemplateFields = Pick<Template, 'slug' | 'name' | 'subject' | 'html' | 'text' | 'from' | 'to' | 'reply_to'>;

export type SuppressionReason = 'hard_bounce' | 'complaint' | 'unsubscribe' | 'manual';

export interface Suppression {
  tenant_id: string;
  address: string;
  reason: SuppressionReason;
  detail: string | null;
  created_at: string;
}

export interface CapturedMessage {
  message_id: string;
  tenant_id: string;
  from: string;
  to: string;
  subject: string;
  html: string;
  /** As the sender gave it; null when generated from the html, which is done when it is read. */
  text: string | null;
  headers: Record<string, string>;
  captured_at: string;
  /** The sandbox key that sent it; null for captures from before keys were recorded. */
  key_id: string | null;
  /** The DKIM signature's domain and selectors, as delivery would sign it; null: unsigned (see the timeline for why). */
  dkim: { d: string; s: string[] } | null;
  /** A signed capture's exact bytes, base64; null when unsigned (its source is composed when read). */
  source: string | null;
}

/** A page of captures: newest first, of one key or (without key_id) the whole tenant, those a search finds. */
export interface CaptureQuery {
  limit: number;
  cursor?: string;
  key_id?: string;
  /** Case-insensitive, found anywhere in the recipient, the subject or the text part; three characters or more (a trigram index). */
  search?: string;
}

/** The fewest characters a capture search may have: the stores' trigram indexes find nothing shorter. */
export const MIN_CAPTURE_SEARCH = 3;

/** A signed-in session of the capture inbox's web UI, stored by the SHA-256 of its token. */
export interface InboxSession {
  hash: string;
  key_id: string;
  expires_at: string;
}

/** Why a webhook endpoint is disabled: by hand, it answered 410 Gone, or it failed with no success for days. */
export type WebhookDisabledReason = 'manual' | 'gone' | 'failing';

export interface WebhookEndpoint {
  id: string;
  tenant_id: string;
  url: string;
  /** The event types it is subscribed to. */
  events: string[];
  enabled: boolean;
  disabled_reason: WebhookDisabledReason | null;
  disabled_at: string | null;
  /** The signing secret, whsec_…: an HMAC key, so it is stored as it is (unlike API keys, which are hashed). */
  secret: string;
  /** The secret before the last rotation: deliveries are signed with it too until it expires. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookCreate = Pick<WebhookEndpoint, 'id' | 'tenant_id' | 'url' | 'events' | 'secret'>;

/** `enabled: true` clears the disabled reason; `enabled: false` disables by hand ('manual'). */
export type WebhookPatch = Partial<Pick<WebhookEndpoint, 'url' | 'events' | 'enabled'>>;

/** A sending domain is pending until its required DNS records are found (tenancy/domains.ts). */
export type DomainStatus = 'pending' | 'verified';

/** One DKIM key pair of a domain; the private key (PEM) is sealed at rest and never leaves the service. */
export interface DkimKey {
  selector: string;
  /** What the `p=` tag of the DNS record carries (base64). */
  public_key: string;
  /** PKCS#8 PEM. */
  private_key: string;
}

/** What the last verification found for one DNS record. */
export interface RecordCheck {
  /** The values found at the record's name (TXT strings joined, MX hosts); empty when none. */
  found: string[];
  matches: boolean;
  /** The look-up's failure (ENOTFOUND, ENODATA, a timeout), null when it answered. */
  error: string | null;
}

export interface SendingDomain {
  id: string;
  tenant_id: string;
  /** Lower case, IDNA A-labels (xn--…), no trailing dot. */
  name: string;
  status: DomainStatus;
  dkim: { rsa: DkimKey; ed25519: DkimKey };
  /** The last verification's result per record, keyed `<purpose>:<record name>`; empty before the first. */
  checks: Record<string, RecordCheck>;
  /** The host name tracked links use instead of GATEPOST_PUBLIC_URL's (a CNAME to it); null: none. */
  tracking_host: string | null;
  checked_at: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

export type DomainCreate = Pick<SendingDomain, 'id' | 'tenant_id' | 'name' | 'dkim' | 'tracking_host'>;

/** A verification's result: the status it leads to and what each record showed. */
export type DomainCheck = Pick<SendingDomain, 'status' | 'checks'>;

/**
 * An operator's delivery-receipt signing key (mta/receipt.keys.ts), Ed25519. One is current (no
 * `retired_at`) and signs; retired ones stay, so the receipts they signed still verify.
 */
export interface ReceiptKey {
  /** The RFC 7638 thumbprint of the public JWK. */
  kid: string;
  public_jwk: { kty: string; crv: string; x: string };
  /** PKCS#8 PEM: sealed at rest with the catalog's Sealer, opened when read. */
  private_key: string;
  created_at: string;
  retired_at: string | null;
}

export type NewReceiptKey = Pick<ReceiptKey, 'kid' | 'public_jwk' | 'private_key'>;

/** A receipt key without its private half, as the JWKS lists it. */
export type ReceiptPublicKey = Omit<ReceiptKey, 'private_key'>;

/** What came of a message received at a return-path domain (docs/bounces.md). */
export type ReportOutcome = 'recorded' | 'repeat' | 'unrecognised';

/** A message received at a return-path domain: a bounce, a complaint, or neither; kept whatever came of it. */
export interface ReceivedReport {
  /** `rpt_…` */
  id: string;
  /** The tenant whose verified domain owns the return-path domain it arrived at; null when none does. */
  tenant_id: string | null;
  /** The envelope recipient (a VERP address, or the feedback-loop address) and sender. */
  rcpt: string;
  mail_from: string;
  remote_address: string;
  received_at: string;
  /** What the parser took it for: `dsn`, `arf`, `plain` (a bounce in no standard format) or `unknown`. */
  kind: 'dsn' | 'arf' | 'plain' | 'unknown';
  outcome: ReportOutcome;
  /** The message it was tied to (or, unrecognised, the one it named); null when none. */
  message_id: string | null;
  /** Why it was not tied to a message; null when it was. */
  reason: string | null;
  /** What the parser found: recipients, statuses and diagnostics, the feedback, the original headers. */
  findings: Record<string, unknown>;
  /** The start of an unrecognised message, to look at; null for the others. */
  excerpt: string | null;
  /** Its size in bytes. */
  size: number;
}

/** What an inbound route does with mail it matches: post `email.inbound` to webhooks, or only keep it. */
export type InboundAction = 'webhook' | 'store';

/** An inbound route (tenancy/inbound.routes.ts has the match syntax). */
export interface InboundRoute {
  id: string;
  tenant_id: string;
  /** Lower case: `user@domain`, `*@domain`, or a local part with `*` wildcards (`support+*@domain`). */
  match: string;
  /** The domain part of `match`: a verified sending domain of the tenant whose inbound MX record was found. */
  domain: string;
  action: InboundAction;
  /** The one endpoint `webhook` posts to; null: every enabled endpoint subscribed to `email.inbound`. */
  endpoint_id: string | null;
  created_at: string;
  updated_at: string;
}
export type InboundRouteCreate = Pick<InboundRoute, 'id' | 'tenant_id' | 'match' | 'domain' | 'action' | 'endpoint_id'>;
export type InboundRoutePatch = Partial<Pick<InboundRoute, 'match' | 'domain' | 'action' | 'endpoint_id'>>;

/** An attachment of a received message: what the payload lists, and its bytes, kept beside the message. */
export interface InboundAttachment {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
  content: Buffer;
}

/** A message the inbound MX received for a tenant: the raw bytes and attachments are kept apart (inboundRaw, inboundAttachment). */
export interface InboundMessage {
  id: string;
  tenant_id: string;
  /** The route that matched (which may have been deleted since). */
  route_id: string;
  /** The envelope: MAIL FROM (`''` for the null sender) and the recipients of this tenant. */
  mail_from: string;
  rcpt_to: string[];
  remote_address: string;
  received_at: string;
  /** The parsed message and its verdicts: the `email.inbound` data, without the URLs (made where it is served). */
  payload: Record<string, unknown>;
  /** The raw message's size in bytes. */
  size: number;
}
export type InboundMessageCreate = Omit<InboundMessage, 'size'> & { raw: Buffer; attachments: InboundAttachment[] };

/** A list of contacts a broadcast fans out to (docs/broadcasts.md). */
export interface Audience {
  /** `aud_…` */
  id: string;
  tenant_id: string;
  name: string;
  /** How many contacts it holds, unsubscribed ones included. */
  contacts: number;
  created_at: string;
}

/** A person in an audience: what a broadcast (and, later, an automation run) keys on is its id and audience. */
export interface Contact {
  /** `con_…` */
  id: string;
  tenant_id: string;
  audience_id: string;
  /** Normalized (mail/address.ts `normalizeAddress`): one contact per address per audience. */
  email: string;
  name: string | null;
  /** Merge variables a broadcast renders with, beside `email` and `name`. */
  data: Record<string, unknown>;
  /** Set, the contact is skipped by every broadcast to the audience. */
  unsubscribed: boolean;
  created_at: string;
  updated_at: string;
}

export type ContactCreate = Pick<Contact, 'id' | 'tenant_id' | 'audience_id' | 'email' | 'name' | 'data' | 'unsubscribed'>;
export type ContactPatch = Partial<Pick<Contact, 'email' | 'name' | 'data' | 'unsubscribed'>>;

/**
 * A contact to add or update by its email (CSV import): `id` is used when it is new; on an
 * existing contact a name or unsubscribed flag given replaces its own, and `data` is merged key by key.
 */
export interface ContactUpsert {
  id: string;
  email: string;
  name?: string | null;
  data: Record<string, unknown>;
  unsubscribed?: boolean;
}

/** A reputation breaker's status (docs/deliverability.md). */
export type BreakerStatus = 'closed' | 'warning' | 'open' | 'half_open';

/** One tenant's mail for one destination in a fair queue (mta/fair.queue.ts), as GET /v1/queue shows it. */
export interface QueueRow {
  tenant_id: string;
  destination: string;
  waiting: number;
  in_flight: number;
  /** When the oldest waiting message came to the queue (ms since epoch); null when none waits. */
  oldest_queued_at: number | null;
}

/** A lifecycle event a message to a contact can start an automation's run with (events/email.event.ts). */
export const AUTOMATION_EMAIL_EVENTS = [
  'email.sent',
  'email.bounced',
  'email.opened',
  'email.clicked',
  'email.complained',
  'email.unsubscribed',
] as const;
export type AutomationEmailEvent = (typeof AUTOMATION_EMAIL_EVENTS)[number];

/** What starts an automation's runs (docs/automations.md#triggers). */
export type AutomationTrigger =
  { type: 'contact_added' } | { type: 'email_event'; event: AutomationEmailEvent } | { type: 'custom_event'; name: string };

/**
 * One step of an automation. Steps run in their order; an `if` goes on to its `then` or `else`
 * step (by id, or `end`), or without one to the next step. A wait's `seconds` is its duration as read.
 */
export type AutomationStep =
  | { id: string; type: 'wait'; duration: string | number; seconds: number }
  | { id: string; type: 'send'; template: string; from: string; subject?: string }
  | { id: string; type: 'if'; opened?: string; clicked?: string; then?: string; else?: string };

/** An event-driven sequence of steps run for the contacts of one audience (docs/automations.md). */
export interface Automation {
  /** `aut_…` */
  id: string;
  tenant_id: string;
  name: string;
  audience_id: string;
  trigger: AutomationTrigger;
  steps: AutomationStep[];
  /** Disabled, it starts no run and its runs stop at their next step. */
  enabled: boolean;
  /** Its sends are captured (the sandbox inbox), never delivered. */
  sandbox: boolean;
  /** The key that made it: its runs send as that key, and stop if it is revoked. */
  key_id: string;
  created_at: string;
  updated_at: string;
}

export type AutomationCreate = Pick<
  Automation,
  'id' | 'tenant_id' | 'name' | 'audience_id' | 'trigger' | 'steps' | 'sandbox' | 'key_id'
>;
export type AutomationPatch = Partial<Pick<Automation, 'name' | 'enabled'>>;

/** `waiting`: on a wait step's reminder. `stopped`: ended before its last step, `reason` says why. */
export type RunStatus = 'running' | 'waiting' | 'completed' | 'stopped' | 'failed';

/** A run as the catalog lists it; its timeline is its actor's (actors/automation). */
export interface AutomationRun {
  /** `run_…`, made from the automation, the contact and the triggering event. */
  id: string;
  tenant_id: string;
  automation_id: string;
  contact_id: string;
  email: string;
  status: RunStatus;
  reason: string | null;
  started_at: string;
  updated_at: string;
}

/** A contact added to an audience whose `contact_added` runs are owed, until they are started. */
export interface ContactTrigger {
  contact_id: string;
  tenant_id: string;
  audience_id: string;
  email: string;
}

/** What an upsert of contacts did: `added_ids` are the ids of the rows that were new contacts. */
export interface ContactsUpserted {
  added: number;
  updated: number;
  added_ids: string[];
}

/** Where a broadcast is (docs/broadcasts.md); the catalog keeps what its BroadcastActor last wrote. */
export type BroadcastStatus = 'draft' | 'scheduled' | 'sending' | 'paused' | 'sent' | 'cancelled';

/** A broadcast as drafted: one content, rendered for each contact of an audience. */
export interface Broadcast {
  /** `bro_…` */
  id: string;
  tenant_id: string;
  name: string;
  audience_id: string;
  from: string;
  /** Required unless a template gives it; with a template, given fields win over the template's. */
  subject: string | null;
  html: string | null;
  text: string | null;
  /** A template slug, read when the broadcast is sent. */
  template: string | null;
  /** Merge variables for every message, under each contact's own. */
  data: Record<string, unknown>;
  /** Captured, never delivered (a sandbox broadcast, like a sandbox key's sends). */
  sandbox: boolean;
  status: BroadcastStatus;
  send_at: string | null;
  /** While paused: why, and until when; null otherwise. */
  paused: BroadcastPaused | null;
  /** What the fan-out has done so far; null for a draft. */
  progress: BroadcastFanOut | null;
  created_at: string;
  updated_at: string;
}

export type BroadcastCreate = Omit<Broadcast, 'status' | 'send_at' | 'paused' | 'progress' | 'created_at' | 'updated_at'>;

/** Why a paused broadcast waits (an open reputation breaker, the tenant's daily quota), and until when. */
export interface BroadcastPaused {
  reason: string;
  until: string;
}

/** A fan-out's own count: what the gate did with the contacts walked so far. */
export interface BroadcastFanOut {
  /** Messages the gate admitted (a message admitted before a crash, admitted again, is the same message). */
  admitted: number;
  refused: {
    /** The gate refused the address: the tenant's suppression list has it. */
    suppressed: number;
    /** Skipped: the contact is unsubscribed from the audience. */
    unsubscribed: number;
    /** The gate refused it for another reason (a render over its limits, a sender no longer verified). */
    other: number;
  };
  started_at: string | null;
  finished_at: string | null;
}

/** Where a sent broadcast is, as its BroadcastActor writes it after each page: what a read shows without asking the actor. */
export interface BroadcastState {
  status: Exclude<BroadcastStatus, 'draft'>;
  send_at: string | null;
  paused: BroadcastPaused | null;
  progress: BroadcastFanOut;
}

/** What a broadcast's messages' lifecycle events are counted as: each message once per kind. */
export const BROADCAST_EVENT_KINDS = ['sent', 'bounced', 'opened', 'clicked', 'unsubscribed', 'complained'] as const;
export type BroadcastEventKind = (typeof BROADCAST_EVENT_KINDS)[number];

export interface Page<T> {
  data: T[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  next_cursor: string | null;
}

export interface Catalog {
  createTenant(t: { id: string; name: string; default_from: string | null; quota: Quota }): Promise<Tenant>;
  getTenant(id: string): Promise<Tenant | null>;
  listTenants(): Promise<Tenant[]>;
  updateTenant(
    id: string,
    patch: Partial<Pick<Tenant, 'name' | 'default_from' | 'quota' | 'queue_weight'>>,
  ): Promise<Tenant | null>;

  createKey(k: NewKey, hash: string): Promise<ApiKey>;
  /** The live (unrevoked) key with this hash. */
  findKeyByHash(hash: string): Promise<ApiKey | null>;
  listKeys(tenantId: string): Promise<ApiKey[]>;
  revokeKey(tenantId: string, keyId: string): Promise<ApiKey | null>;
  /** Changes the fields given; null when the tenant has no such key. */
  updateKey(tenantId: string, keyId: string, patch: Partial<KeySettings>): Promise<ApiKey | null>;

  createTemplate(tenantId: string, id: string, fields: TemplateFields): Promise<Template>;
  getTemplate(tenantId: string, slug: string): Promise<Template | null>;
  listTemplates(tenantId: string): Promise<Template[]>;
  updateTemplate(tenantId: string, slug: string, fields: Partial<TemplateFields>): Promise<Template | null>;
  deleteTemplate(tenantId: string, slug: string): Promise<boolean>;

  putSuppression(s: Suppression): Promise<void>;
  deleteSuppression(tenantId: string, address: string): Promise<void>;
  /** The entry for this (normalized) address, as the list has it; it follows the RecipientActors a moment late. */
  getSuppression(tenantId: string, address: string): Promise<Suppression | null>;
  listSuppressions(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<Suppression>>;

  putCapture(c: CapturedMessage): Promise<void>;
  listCaptures(tenantId: string, opts: CaptureQuery): Promise<Page<CapturedMessage>>;
  getCapture(tenantId: string, messageId: string): Promise<CapturedMessage | null>;
  /** False when the tenant has no such capture. */
  deleteCapture(tenantId: string, messageId: string): Promise<boolean>;
  /** Deletes the tenant's captures, or only those one key sent; answers how many. */
  deleteCaptures(tenantId: string, keyId?: string): Promise<number>;

  /**
   * Stores opens and clicks (gate/tracking.recorder.ts), many messages' in one write; an event
   * stored already (a publication delivered twice) is kept once.
   */
  recordEngagement(events: EngagementEvent[]): Promise<void>;
  /** A message's opens and clicks, in the order they were recorded. */
  engagementOf(messageId: string): Promise<StoredEvent[]>;
  /** Deletes a message's opens and clicks: its retention is over (`message.expired`). */
  forgetEngagement(messageId: string): Promise<void>;

  /** Stores a session, and forgets every expired one. */
  createInboxSession(s: InboxSession): Promise<void>;
  /** The key of the unexpired session with this hash, if the key is not revoked. */
  inboxSessionKey(hash: string): Promise<ApiKey | null>;
  deleteInboxSession(hash: string): Promise<void>;

  createWebhook(w: WebhookCreate): Promise<WebhookEndpoint>;
  getWebhook(tenantId: string, id: string): Promise<WebhookEndpoint | null>;
  /** Every endpoint of the tenant, oldest first (then by id). */
  listWebhooks(tenantId: string): Promise<WebhookEndpoint[]>;
  /** The tenant's enabled endpoints subscribed to `eventType`, oldest first. */
  webhooksFor(tenantId: string, eventType: string): Promise<WebhookEndpoint[]>;
  updateWebhook(tenantId: string, id: string, patch: WebhookPatch): Promise<WebhookEndpoint | null>;
  /** Disables an enabled endpoint for `reason`; one already disabled keeps its first reason. */
  disableWebhook(tenantId: string, id: string, reason: WebhookDisabledReason): Promise<WebhookEndpoint | null>;
  /** Makes `secret` current; the current one becomes previous, signing until `previousExpiresAt`. */
  rotateWebhookSecret(tenantId: string, id: string, secret: string, previousExpiresAt: string): Promise<WebhookEndpoint | null>;
  deleteWebhook(tenantId: string, id: string): Promise<boolean>;

  /**
   * Refuses `domain_exists` when the tenant has the name already, and `domain_taken` when another
   * tenant has it verified. Several tenants may hold the same name pending: the first to verify it owns it.
   */
  createDomain(d: DomainCreate): Promise<SendingDomain>;
  getDomain(tenantId: string, id: string): Promise<SendingDomain | null>;
  /** Every domain of the tenant, oldest first (then by id). */
  listDomains(tenantId: string): Promise<SendingDomain[]>;
  /** The tenant's verified domain with this name, keys opened: what DKIM signing needs. */
  verifiedDomain(tenantId: string, name: string): Promise<SendingDomain | null>;
  /** The names of the tenant's verified domains. */
  verifiedDomainNames(tenantId: string): Promise<string[]>;
  /**
   * Records a verification; `verified` when another tenant has the name verified already is
   * refused with `domain_taken` (and nothing is recorded). Null when the tenant has no such domain.
   */
  recordDomainCheck(tenantId: string, id: string, check: DomainCheck): Promise<SendingDomain | null>;
  /** Names the domain's tracking host, or none (null). Null when the tenant has no such domain. */
  setTrackingHost(tenantId: string, id: string, host: string | null): Promise<SendingDomain | null>;
  deleteDomain(tenantId: string, id: string): Promise<boolean>;

  /** The tenant that has the domain `name` verified (one tenant at most can), or null. */
  domainOwner(name: string): Promise<string | null>;

  /** Keeps a received report; the same id again changes nothing. */
  putReport(r: ReceivedReport): Promise<void>;
  /** Reports newest first (then by id), of one tenant, or (tenant_id undefined) of all, the unowned included. */
  listReports(opts: { tenant_id?: string; limit: number; cursor?: string }): Promise<Page<ReceivedReport>>;

  /** The current receipt key, or null before the first is made. */
  currentReceiptKey(): Promise<ReceiptKey | null>;
  /** Stores `k` as the current key unless there is one already; answers the current key (two hosts racing agree on one). */
  createReceiptKey(k: NewReceiptKey): Promise<ReceiptKey>;
  /** Retires the current key (if any) and stores `k` as the current one, at once. */
  rotateReceiptKey(k: NewReceiptKey): Promise<ReceiptKey>;
  /** Every receipt key, current and retired, oldest first, without private halves. */
  listReceiptKeys(): Promise<ReceiptPublicKey[]>;

  /** The verified domain with this name, whichever tenant holds it (one at most does). */
  verifiedDomainByName(name: string): Promise<SendingDomain | null>;
  createAudience(a: Pick<Audience, 'id' | 'tenant_id' | 'name'>): Promise<Audience>;
  getAudience(tenantId: string, id: string): Promise<Audience | null>;
  /** Every audience of the tenant, oldest first (then by id). */
  listAudiences(tenantId: string): Promise<Audience[]>;
  /** Deletes the audience and its contacts. */
  deleteAudience(tenantId: string, id: string): Promise<boolean>;
  /**
   * Refuses `contact_exists` when the audience has the email already. When an enabled automation
   * of the audience starts on `contact_added`, the contact's trigger is recorded in the same
   * transaction (see pendingContactTriggers).
   */
  createContact(c: ContactCreate): Promise<Contact>;
  /**
   * Adds or updates each row by email, all in one transaction; answers how many were added and
   * updated, and which were added. Records each added contact's trigger as createContact does.
   */
  upsertContacts(tenantId: string, audienceId: string, rows: ContactUpsert[]): Promise<ContactsUpserted>;
  /** Contacts added before `before` whose `contact_added` runs are owed still (a crash came between), oldest first. */
  pendingContactTriggers(before: string, limit: number): Promise<ContactTrigger[]>;
  /** Forgets these contacts' triggers: their runs are started. */
  ackContactTriggers(contactIds: readonly string[]): Promise<void>;
  /** By id (`con_…`) or by email. */
  getContact(tenantId: string, audienceId: string, idOrEmail: string): Promise<Contact | null>;
  /** Refuses `contact_exists` when a new email is another contact's; null when there is no such contact. */
  updateContact(tenantId: string, audienceId: string, id: string, patch: ContactPatch): Promise<Contact | null>;
  deleteContact(tenantId: string, audienceId: string, id: string): Promise<boolean>;
  /** The audience's contacts by id: the order a broadcast walks them in, so a cursor resumes a walk. */
  listContacts(tenantId: string, audienceId: string, opts: { limit: number; cursor?: string }): Promise<Page<Contact>>;

  createAutomation(a: AutomationCreate): Promise<Automation>;
  getAutomation(tenantId: string, id: string): Promise<Automation | null>;
  /** Every automation of the tenant, oldest first (then by id). */
  listAutomations(tenantId: string): Promise<Automation[]>;
  /**
   * The tenant's enabled automations a trigger starts: `key` is the audience of `contact_added`,
   * the event type of `email_event`, the name of `custom_event`.
   */
  automationsTriggeredBy(tenantId: string, type: AutomationTrigger['type'], key: string): Promise<Automation[]>;
  updateAutomation(tenantId: string, id: string, patch: AutomationPatch): Promise<Automation | null>;
  /** Deletes the automation and its list of runs (the runs stop at their next step). */
  deleteAutomation(tenantId: string, id: string): Promise<boolean>;
  /**
   * Adds or rewrites a run in the list, unless its automation was deleted or the list has a later
   * state of the run (a later `updated_at`): mirrors of one run's changes may arrive out of order.
   */
  putAutomationRun(r: AutomationRun): Promise<void>;
  /** An automation's runs, newest first (then by id). */
  listAutomationRuns(
    tenantId: string,
    automationId: string,
    opts: { limit: number; cursor?: string },
  ): Promise<Page<AutomationRun>>;

  createBroadcast(b: BroadcastCreate): Promise<Broadcast>;
  getBroadcast(tenantId: string, id: string): Promise<Broadcast | null>;
  /** The tenant's broadcasts, newest first. */
  listBroadcasts(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<Broadcast>>;
  /** Where the broadcast is, as its actor writes it after each page of its fan-out. */
  setBroadcastState(tenantId: string, id: string, state: BroadcastState): Promise<void>;
  /** Deletes the broadcast and its counts. */
  deleteBroadcast(tenantId: string, id: string): Promise<boolean>;
  /** Counts one message of a broadcast as `kind`; the same message and kind again count nothing. */
  countBroadcastEvent(e: { broadcast_id: string; kind: BroadcastEventKind; message_id: string }): Promise<void>;
  /** How many of the broadcast's messages were counted as each kind. */
  broadcastCounts(broadcastId: string): Promise<Record<BroadcastEventKind, number>>;

  createInboundRoute(r: InboundRouteCreate): Promise<InboundRoute>;
  getInboundRoute(tenantId: string, id: string): Promise<InboundRoute | null>;
  /** Every route of the tenant, oldest first (then by id). */
  listInboundRoutes(tenantId: string): Promise<InboundRoute[]>;
  /** Every route on this domain, of any tenant, oldest first: what the inbound MX matches recipients against. */
  inboundRoutesOn(domain: string): Promise<InboundRoute[]>;
  updateInboundRoute(tenantId: string, id: string, patch: InboundRoutePatch): Promise<InboundRoute | null>;
  deleteInboundRoute(tenantId: string, id: string): Promise<boolean>;
  /** Stores a received message with its raw bytes and attachments; a repeat of the same id changes nothing. */
  putInboundMessage(m: InboundMessageCreate): Promise<void>;
  getInboundMessage(tenantId: string, id: string): Promise<InboundMessage | null>;
  /** The tenant's received messages, newest first. */
  listInboundMessages(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<InboundMessage>>;
  inboundRaw(tenantId: string, id: string): Promise<Buffer | null>;
  /** Attachment `n` (from 0, in the payload's order) of a received message. */
  inboundAttachment(tenantId: string, id: string, n: number): Promise<InboundAttachment | null>;

  /** Replaces what the actor host `hostId`'s fair queue holds (app/queue.shared.ts), stamped with the catalog's clock. */
  putQueueSnapshot(hostId: string, rows: QueueRow[]): Promise<void>;
  /** The rows of every host that told within the last `maxAgeMs`: a cluster's queue. */
  queueSnapshotRows(maxAgeMs: number): Promise<QueueRow[]>;
  /** A host that stops takes its rows away. */
  deleteQueueSnapshot(hostId: string): Promise<void>;

  /** Keeps a tenant's breaker status as a transition at `since` (ms since epoch) left it, unless a newer one is kept. */
  putBreakerState(tenantId: string, status: BreakerStatus, since: number): Promise<void>;
  /** Every tenant's breaker status kept: those whose breaker has moved. */
  breakerStates(): Promise<{ tenant_id: string; status: BreakerStatus }[]>;
  close(): Promise<void>;
}
