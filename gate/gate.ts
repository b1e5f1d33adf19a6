// The admission gate: the one way from any ingress to a committed message. An ingress
// authenticates, turns its wire format into a SendDraft and calls `admit`; the gate checks the
// draft, renders it, and hands it to the message's actor, whose `admit` turn checks
// idempotency and suppression, takes the send from the tenant's quota, and commits the message
// with its outbox entry.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { GatepostError, invalid, type ErrorDetail } from '../errors/errors.catalog.ts';
import { canonicalJson } from '../lib/canonical.ts';
import { derivedId, derivedIdOrderedBy, newId, sha256Hex } from '../lib/ids.ts';
import { domainOf, parseMailbox } from '../mail/address.ts';
import { renderField } from '../mail/render.ts';
import { DEFAULT_RENDER_LIMITS, dataDepthProblems, type RenderLimits } from '../mail/render.limits.ts';
import type { RenderedContent, ShownRecipients } from '../mail/content.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import type { AdmitArgs, AdmitResult, BatchHold, Stream } from '../actors/message/message.state.ts';
import { batchActor } from '../actors/batch/batch.actor.ts';
import { suppressionOf } from '../actors/recipient/recipient.actor.ts';
import { catalogIndex } from '../actors/recipient/suppression.index.ts';
import type { ApiKey, Catalog, Tenant } from '../store/catalog.port.ts';
import { checkAttachments, checkHeaders, checkSendAt } from '../mail/policy.ts';
import { uncounted, type Metrics } from '../ops/metrics.port.ts';
import { applyTracking, trackingChoice, trackingLinks, unsubscribeUrl } from '../mail/tracking.apply.ts';
import { newTrackingKey } from '../mail/tracking.token.ts';
import type { MessageOrigin } from '../events/email.event.ts';

/** What an admission answers, and a message's streams: the ingresses speak of them too. */
export type { AdmitResult, Stream };

/** Where a send came in; it lands on the message's timeline. */
export type Ingress = 'api' | 'api_batch' | 'smtp' | 'style_p' | 'style_s' | 'style_m' | 'browser' | 'automation' | 'broadcast';

/** Who is sending: resolved by the ingress from the credential it was given. */
export interface Sender {
  tenant: Tenant;
  key: ApiKey;
}

/** A send as every ingress describes it, before rendering. */
export interface SendDraft {
  from?: string;
  to?: string;
  /** Shown on the message; each also receives it. */
  cc?: string[];
  bcc?: string[];
  reply_to?: string;
  subject?: string;
  html?: string;
  text?: string;
  /** A template slug; its subject, html, text (and stored from, to, reply_to) are used. */
  template?: string;
  data?: Record<string, unknown>;
  headers?: Record<string, string>;
  tags?: string[];
  stream?: Stream;
  send_at?: string;
  /** How many attachments the request carried: any at all is refused, never dropped. */
  attachments?: number;
  /**
   * Send subject, html and text exactly as given, filling no {{placeholders}}: for providers whose
   * plain sends are not templates and for SMTP submissions (a literal "{{" there is content, not
   * a merge field).
   */
  literal?: boolean;
  /**
   * Capture instead of delivering, whatever the key (a provider's test mode: SendGrid's
   * `sandbox_mode`, Mailgun's `o:testmode`). A sandbox key always captures.
   */
  sandbox?: boolean;
  /**
   * The To and Cc headers as the sender wrote them, when they are not the message's recipients:
   * an SMTP submission, where the envelope decides who receives (RFC 5321 §3.3) and each
   * envelope recipient is a message of its own. Shown only: nobody receives the message for
   * being listed here.
   */
  shown?: ShownRecipients;
  /** Open and click tracking, and List-Unsubscribe: each by default on for the broadcast stream, off for transactional. */
  track_opens?: boolean;
  track_clicks?: boolean;
  list_unsubscribe?: boolean;
}

export interface Admission {
  sender: Sender;
  ingress: Ingress;
  draft: SendDraft;
  idempotencyKey?: string;
  /** The id of the request (HTTP) or session (SMTP) that made it: kept on the message, named in its delivery's log lines. */
  requestId?: string;
  /** What made it besides the request (a broadcast's fan-out): kept on the message, carried by its lifecycle events. */
  origin?: MessageOrigin;
}

/** One message of an all-or-nothing admission. */
export interface BatchItem {
  draft: SendDraft;
  idempotencyKey?: string;
}

export interface BatchAdmission {
  sender: Sender;
  ingress: Ingress;
  items: BatchItem[];
  /** As Admission's: every item's message keeps it. */
  requestId?: string;
  /**
   * The request's own idempotency key, if it has one: a retry of the request then continues
   * the same batch (each item should carry a key derived from it, so nothing is sent twice).
   */
  batchKey?: string;
  /**
   * `per_item`: a policy refusal (suppressed, invalid, over quota) is that item's result and the
   * others go on. `all`: any refusal refuses the whole request. Either way a failure that is not
   * a refusal (a store error, a crash) rolls back every item.
   */
  refusals: 'per_item' | 'all';
}

export type BatchResult = { ok: AdmitResult } | { refused: GatepostError };

/** The refusal of one item that refused a whole all-or-nothing admission: `item` says which. */
export class ItemRefused extends GatepostError {
  constructor(
    readonly item: number,
    refusal: GatepostError,
  ) {
    super(refusal.code, refusal.message, { details: refusal.details, retryAfter: refusal.retryAfter });
  }
}

export interface Gate {
  admit(admission: Admission): Promise<AdmitResult>;
  /**
   * Admits several messages as one: every item is committed, or none is (spec part 4 rule 4).
   * Answers one result per item, in order. With `refusals: 'all'`, a refusal is thrown as an
   * `ItemRefused` naming the item, so the ingress can point at the recipient at fault.
   */
  admitAll(admission: BatchAdmission): Promise<BatchResult[]>;
  /**
   * Read-only, ahead of admission: throws `recipient_suppressed` if the sender's tenant has
   * suppressed the address, so an ingress can refuse that recipient alone (SMTP answers each
   * RCPT TO). Admission checks again; this only answers earlier, and may miss a suppression
   * made a moment ago, which admission then refuses.
   */
  checkRecipient(sender: Sender, address: string): Promise<void>;
}

/**
 * Which domains a tenant may send live mail from: its verified sending domains
 * (tenancy/domains.ts, cached per tenant, so a send asks no store).
 */
export interface VerifiedSenders {
  isVerified(tenantId: string, domain: string): Promise<boolean>;
}

/** The hosts the links of a tenant's mail from a domain use (tenancy/domains.ts). */
export interface LinkHostsSource {
  linkHostsFor(tenantId: string, domain: string): Promise<{ tracking_host: string | null; return_path: string | null }>;
}

/** A message ready for its actor's admission. */
interface Prepared {
  id: string;
  args: AdmitArgs;
}

export interface GateDeps {
  invoker: Invoker;
  catalog: Catalog;
  /**
   * Live mail only from verified domains: always with direct delivery, with a relay when
   * GATEPOST_REQUIRE_VERIFIED_DOMAIN says so. Null: any from domain (a relay that checks for itself).
   */
  senders: VerifiedSenders | null;
  /** What one render may cost (the operator's GATEPOST_RENDER_* settings); the defaults otherwise. */
  renderLimits?: RenderLimits;
  /** Counts each send by ingress and outcome, and each refusal by code. */
  metrics?: Metrics;
  /**
   * Where tracking and unsubscribe links point (GATEPOST_PUBLIC_URL), asked at each admission: a
   * server listening on port 0 knows its URL only once it listens. By default DESIGN's default,
   * http://localhost:3000.
   */
  publicUrl?: () => string;
  /** A sending domain's tracking host and return path, for its mail's links; none: every link under publicUrl, no mailto. */
  linkHosts?: LinkHostsSource;
}

const DEFAULT_PUBLIC_URL = 'http://localhost:3000';
const NO_LINK_HOSTS: LinkHostsSource = { linkHostsFor: async () => ({ tracking_host: null, return_path: null }) };

export function createGate(deps: GateDeps): Gate {
  const renderLimits = deps.renderLimits ?? DEFAULT_RENDER_LIMITS;
  const publicUrl = deps.publicUrl ?? (() => DEFAULT_PUBLIC_URL);
  const linkHosts = deps.linkHosts ?? NO_LINK_HOSTS;
  const suppressions = catalogIndex(deps.catalog);
  /** The checks that need no state, and rendering: what the message actor is to admit. */
  const metrics = deps.metrics ?? uncounted;
  /** What a message's tokens are made with: its tracking key (only its actor keeps it) and where its links point. */
  async function tokensFor(tenantId: string, from: string) {
    // A from that is no mailbox is refused by checkContent; its links point under publicUrl meanwhile.
    const fromAddress = parseMailbox(from)?.address;
    const hosts = fromAddress ? await linkHosts.linkHostsFor(tenantId, domainOf(fromAddress)) : null;
    return { key: newTrackingKey(), links: trackingLinks(publicUrl(), hosts ?? { tracking_host: null, return_path: null }) };
  }
  async function prepare({ sender, ingress, draft, idempotencyKey, requestId, origin }: Admission): Promise<Prepared> {
    const { tenant, key } = sender;
    if (key.kind === 'public' && ingress !== 'browser') {
      throw new GatepostError('key_not_allowed', 'A public key can only send through the browser SDK endpoints.');
    }
    if (ingress === 'browser' && key.kind === 'live') {
      throw new GatepostError('key_not_allowed', 'The browser SDK endpoints take a public key (gp_public_), never a live key.');
    }
    if (ingress === 'browser') checkBrowserDraft(draft);
    checkAttachments(draft.attachments ?? 0);
    const problems: ErrorDetail[] = [
      ...checkSendAt(draft.send_at),
      ...checkHeaders(draft.headers ?? {}),
      ...dataDepthProblems(draft.data),
    ];
    if (problems.length > 0) throw invalid(problems);

    const sandbox = capturesOnly(key, draft);
    const id = idempotencyKey ? messageIdFor(tenant.id, modeOf(sandbox), idempotencyKey, origin) : newId('msg');
    const stream = draft.stream ?? 'transactional';
    const source = await sourceOf(deps.catalog, tenant, draft, ingress);
    // `{{unsubscribe_url}}` is signed (an HMAC) only for content that names it.
    const named = !draft.literal && [source.subject, source.html, source.text].some((f) => f?.includes('unsubscribe_url'));
    const choice = trackingChoice(stream, draft);
    // Mail with no token (transactional mail tracks nothing by default) has no tracking key, and
    // its links' hosts are not looked up.
    const tokens = named || choice.opens || choice.clicks || choice.unsubscribe ? await tokensFor(tenant.id, source.from) : null;
    const provided: Record<string, string> =
      named && tokens ? { unsubscribe_url: unsubscribeUrl(tokens.links, id, tokens.key) } : {};
    // The rendered content is checked (checkContent) inside the message actor's admitting turn.
    const rendered = await render(source, draft, renderLimits, provided);
    const content = tokens ? applyTracking(rendered, choice, tokens.links, { id, key: tokens.key }) : rendered;
    // A capture goes nowhere: a sandbox key tries any sender out.
    if (!sandbox && deps.senders) await checkSender(deps.senders, tenant.id, content.from);

    // Only a client's key lets a request repeat, and the same key with other content is refused;
    // without one there is nothing to compare the hash with.
    const requestHash = idempotencyKey && !OWN_KEYS.has(ingress) ? sha256Hex(canonicalJson({ ...draft, stream })) : null;
    return {
      id,
      args: {
        tenant_id: tenant.id,
        key_id: key.id,
        sandbox,
        stream,
        ingress,
        request_hash: requestHash,
        idempotency_key: idempotencyKey ?? null,
        tags: draft.tags ?? [],
        quota_limits: tenant.quota,
        content,
        ...(tokens ? { tracking_key: tokens.key } : {}),
        send_at: draft.send_at ? new Date(draft.send_at).toISOString() : null,
        request_id: requestId ?? null,
        ...(origin ? { origin } : {}),
      },
    };
  }

  const message = (id: string) => actor(deps.invoker, messageActor, id);

  const admitPrepared = ({ id, args }: Prepared, hold?: BatchHold): Promise<AdmitResult> =>
    actor(deps.invoker, messageActor, id).admit(hold ? { ...args, hold } : args);

  async function admit(admission: Admission): Promise<AdmitResult> {
    return admitPrepared(await prepare(admission));
  }

  /** Counts one send that failed: a refusal by its code, anything else as ours. */
  function countFailure(ingress: Ingress, error: unknown, sends = 1): void {
    if (isRefusal(error)) {
      metrics.refusal(error.code);
      for (let i = 0; i < sends; i++) metrics.send(ingress, 'refused');
    } else {
      for (let i = 0; i < sends; i++) metrics.send(ingress, 'failed');
    }
  }

  async function admitAll({ sender, ingress, items, batchKey, refusals, requestId }: BatchAdmission): Promise<BatchResult[]> {
    if (items.length === 1 && batchKey === undefined) {
      // One message is atomic by itself: no batch to decide.
      try {
        return [{ ok: await admit({ sender, ingress, requestId, ...items[0]! }) }];
      } catch (error) {
        if (!isRefusal(error)) throw error;
        if (refusals === 'per_item') return [{ refused: error }];
        throw new ItemRefused(0, error);
      }
    }
    const prepared = await Promise.all(
      items.map((item, i) =>
        prepare({ sender, ingress, requestId, ...item }).catch((error: unknown): { refused: GatepostError } => {
          if (!isRefusal(error)) throw error;
          if (refusals === 'per_item') return { refused: error };
          throw new ItemRefused(i, error);
        }),
      ),
    );
    const sandbox = items.every(({ draft }) => capturesOnly(sender.key, draft));
    const batchId = batchKey === undefined ? newId('bat') : derivedId('bat', sender.tenant.id, modeOf(sandbox), batchKey);
    const batch = actor(deps.invoker, batchActor, batchId);
    // The same key with another request is refused (as for one message), not taken for a replay.
    const requestHash = batchKey === undefined ? undefined : sha256Hex(canonicalJson({ ingress, items }));
    const { attempt, committed } = await batch.begin({ request_hash: requestHash });
    const hold = { batch_id: batchId, attempt };
    const admitted = await Promise.allSettled(
      prepared.map((p) => ('refused' in p ? Promise.resolve(null) : admitPrepared(p, hold))),
    );
    const heldIds = prepared.flatMap((p, i) => (!('refused' in p) && admitted[i]!.status === 'fulfilled' ? [p.id] : []));
    const settleAll = (outcome: 'committed' | 'aborted') =>
      // Best effort: a message not told here asks the batch on its watchdog reminder.
      Promise.allSettled(heldIds.map((id) => message(id).settle({ hold, outcome })));

    const failed = admitted.findIndex((a) => a.status === 'rejected' && (refusals === 'all' || !isRefusal(a.reason)));
    if (failed >= 0) {
      await batch.resolve({ attempt }).catch(() => undefined);
      await settleAll('aborted');
      const reason = (admitted[failed] as PromiseRejectedResult).reason;
      throw isRefusal(reason) ? new ItemRefused(failed, reason) : reason;
    }
    await batch.commit({ attempt });
    await settleAll('committed');
    return prepared.map((p, i): BatchResult => {
      const a = admitted[i]!;
      if ('refused' in p) return p;
      if (a.status === 'rejected') return { refused: a.reason as GatepostError };
      // A batch that had committed before is a replay as a whole, held items included.
      return { ok: { response: a.value!.response, replayed: a.value!.replayed || committed } };
    });
  }

  return {
    async admit(admission) {
      try {
        const result = await admit(admission);
        metrics.send(admission.ingress, result.replayed ? 'replayed' : 'accepted');
        return result;
      } catch (error) {
        countFailure(admission.ingress, error);
        throw error;
      }
    },

    async admitAll(admission) {
      let results: BatchResult[];
      try {
        results = await admitAll(admission);
      } catch (error) {
        // All or nothing: every item of the admission was refused (or failed) with it.
        countFailure(admission.ingress, error, admission.items.length);
        throw error;
      }
      for (const r of results) {
        if ('refused' in r) countFailure(admission.ingress, r.refused);
        else metrics.send(admission.ingress, r.ok.replayed ? 'replayed' : 'accepted');
      }
      return results;
    },

    async checkRecipient({ tenant }, address) {
      // The catalog's list answers at once; only a hit asks the actor, whose word is final, so
      // a lagging list never refuses an address just taken off it.
      const suppression = await suppressionOf(deps.invoker, suppressions, tenant.id, address);
      if (suppression) {
        throw new GatepostError(
          'recipient_suppressed',
          `${address} is suppressed (${suppression.reason}); nothing is sent to it.`,
        );
      }
    },
  };
}

/** Refuses live mail from a domain the tenant has not verified (issue 21 item 2). */
export async function checkSender(senders: VerifiedSenders, tenantId: string, fromText: string): Promise<void> {
  // A from that is no mailbox (no domain part, say) is refused by checkContent, naming the field.
  const from = parseMailbox(fromText);
  if (!from) return;
  const domain = domainOf(from.address);
  if (await senders.isVerified(tenantId, domain)) return;
  throw new GatepostError(
    'sender_not_verified',
    `The from address ${from.address} is not on a verified sending domain of this tenant: add and verify ${domain} (POST /v1/domains), or send with a sandbox key.`,
    { details: [{ field: 'from', message: `${domain} is not a verified sending domain` }] },
  );
}

/**
 * The ingresses whose idempotency keys are Gatepost's own: a broadcast's (the broadcast and the
 * contact) and an automation's (the run and the step). Such a key names the message, not a
 * request, and its content may have changed before it is admitted again (a contact's data edited
 * before a fan-out resumed after a crash): it is still the same message, a replay, never
 * `idempotency_key_reused`. Nothing is hashed for them (4 % of a broadcast message's CPU).
 */
const OWN_KEYS: ReadonlySet<Ingress> = new Set(['broadcast', 'automation']);

/**
 * The id of a message sent with an idempotency key: derived from it, so the same key finds the
 * same message. A broadcast's message sorts with its contact: the fan-out walks its audience in
 * the order of contact ids (made in time order), so its messages' rows are appended to the
 * stores' B-trees, not each written to a page of its own (bench:broadcast: 1.6 times the fan-out,
 * the log's restarts a quarter as long; bench/RESULTS.md, thirty-ninth pass).
 */
function messageIdFor(tenantId: string, mode: string, idempotencyKey: string, origin: MessageOrigin | undefined): string {
  return origin?.kind === 'broadcast'
    ? derivedIdOrderedBy('msg', origin.contact_id, tenantId, mode, idempotencyKey)
    : derivedId('msg', tenantId, mode, idempotencyKey);
}

/** A send is captured, never delivered, from a sandbox key or in a provider's test mode. */
function capturesOnly(key: ApiKey, draft: SendDraft): boolean {
  return key.sandbox || draft.sandbox === true;
}

/**
 * Idempotency keys are scoped by mode: a sandbox send and a live one under the same key are two
 * messages (two batches), so a live send is never answered with a sandbox one's replay, nor the
 * reverse (issue 20, item 2).
 */
const modeOf = (sandbox: boolean) => (sandbox ? 'sandbox' : 'live');

/** A refusal is the sender's to fix (4xx); anything else is ours, and fails a whole batch. */
function isRefusal(error: unknown): error is GatepostError {
  return error instanceof GatepostError && error.status < 500 && error.code !== 'idempotency_key_in_flight';
}

/**
 * Spec part 1 rule 13: from a browser, the recipient always comes from the stored template. The
 * request names a template and may fill its placeholders; it chooses no address at all.
 */
function checkBrowserDraft(draft: SendDraft): void {
  const chosen = (['from', 'to', 'cc', 'bcc', 'reply_to'] as const).filter((f) => draft[f] !== undefined);
  if (chosen.length > 0) {
    throw new GatepostError('recipient_not_allowed', 'A browser send cannot choose addresses; the template stores them.', {
      details: chosen.map((field) => ({ field, message: 'not allowed from the browser' })),
    });
  }
  if (draft.template === undefined) throw invalid([{ field: 'template', message: 'is required from the browser' }]);
}

/** What a send renders from: its own fields, each missing one taken from its template; the sender decided. */
interface Source {
  subject?: string;
  html?: string;
  text?: string;
  from: string;
  to?: string;
  reply_to?: string;
}

async function sourceOf(catalog: Catalog, tenant: Tenant, draft: SendDraft, ingress: Ingress): Promise<Source> {
  let source = {
    subject: draft.subject,
    html: draft.html,
    text: draft.text,
    from: draft.from,
    to: draft.to,
    reply_to: draft.reply_to,
  };
  if (draft.template !== undefined) {
    const template = await catalog.getTemplate(tenant.id, draft.template);
    if (!template) {
      throw new GatepostError('template_not_found', `No template has the slug "${draft.template}".`, {
        details: [{ field: 'template', message: 'no template with this slug' }],
      });
    }
    source = {
      subject: draft.subject ?? template.subject,
      html: draft.html ?? template.html,
      text: draft.text ?? template.text ?? undefined,
      from: draft.from ?? template.from ?? undefined,
      to: draft.to ?? template.to ?? undefined,
      reply_to: draft.reply_to ?? template.reply_to ?? undefined,
    };
    if (ingress === 'browser' && !template.to) {
      throw new GatepostError('template_has_no_recipient', `The template "${draft.template}" stores no recipient.`);
    }
  }
  const missing = (['to', 'subject', 'html'] as const).filter((f) => !source[f]);
  if (missing.length > 0) throw invalid(missing.map((field) => ({ field, message: 'is required' })));
  const from = source.from ?? tenant.default_from;
  if (!from) throw new GatepostError('sender_required');
  return { ...source, from };
}

async function render(
  source: Source,
  draft: SendDraft,
  limits: RenderLimits,
  /** Merge variables Gatepost provides (`unsubscribe_url`); the sender's own data of the same name wins. */
  provided: Record<string, string>,
): Promise<RenderedContent> {
  const data = { ...provided, ...draft.data };
  const fill = draft.literal ? literally : renderField;
  return {
    from: source.from,
    to: source.to!,
    ...(draft.cc?.length ? { cc: draft.cc } : {}),
    ...(draft.bcc?.length ? { bcc: draft.bcc } : {}),
    ...(draft.shown ? { shown: draft.shown } : {}),
    reply_to: source.reply_to ?? null,
    subject: await fill('subject', source.subject!, data, 'text', limits),
    html: await fill('html', source.html!, data, 'html', limits),
    text: source.text === undefined ? null : await fill('text', source.text, data, 'text', limits),
    headers: draft.headers ?? {},
  };
}

/** A literal send's fields, as given: `renderField`'s shape, filling nothing. */
const literally: typeof renderField = async (_field, text) => text;
