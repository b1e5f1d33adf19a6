// DeliveryActor, one per live message: the attempts to hand the message over, through the relay
// (GATEPOST_SMTP_RELAY) or straight to the recipients' MX hosts. An attempt makes one SMTP
// transaction per recipient domain not yet done (the relay takes every recipient in one: the
// transport says, `transactions`), and each transaction is a row on the message's timeline:
// sent (with its signed receipt), bounced (hard: its recipients are suppressed; block: a refusal
// that says nothing of them, nobody is; soft: retries or the horizon ran out) or deferred on a
// reminder. A domain that accepted or refused
// for good is done, as is each recipient refused for good at RCPT TO (a host may take some
// recipients of a transaction, defer others and refuse others): a retry goes only to the
// recipients still deferred.
// A sandbox message needs no actor of its own: `sandboxCapture` puts it in the inbox, signed as
// delivery would sign it, in its MessageActor's turn of the hand-over.
import { actor, defineActor, type ActorTurn } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { isoTime } from '../../lib/now.ts';
import type { RenderedContent } from '../../mail/content.ts';
import { domainOf, parseMailbox } from '../../mail/address.ts';
import type { DkimSigner } from '../../mail/dkim.ts';
import { envelopeRecipients } from '../../mail/mime.ts';
import { outgoingBytes, OutgoingFailed, type Outgoing } from '../../mail/outgoing.thread.ts';
import { queueLease } from '../../mta/fair.queue.ts';
import { sourceOrder } from '../../mta/source.ips.ts';
import { unanswered, type DeliveryReport, type Transport } from '../../mta/transport.ts';
import { receiptDraft } from '../../mta/receipt.ts';
import { returnPathDomain, verpAddress } from '../../mta/verp.ts';
import { classify, messageStatusOf, type DomainResult } from './delivery.outcome.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import { MESSAGE_READY, messageActor, type SandboxCapture } from '../message/message.actor.ts';
import type { AttemptOutcome, MessageReady, MessageRecord, QueuePlace } from '../message/message.state.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';
import { issueReceipt, tenantActor, type DeliveryAdmission, type ReceiptSigner } from '../tenant/tenant.actor.ts';
import { sourceIpActor, sourceIpActorId, type SourceTaken } from '../source-ip/source.ip.actor.ts';
import type { BreakerSettings } from '../tenant/reputation.state.ts';
import type { WarmupSettings } from '../tenant/warmup.state.ts';
import { uncounted, unlogged, type EventLog, type Metrics } from '../../ops/metrics.port.ts';

export const DELIVERY_ACTOR = 'DeliveryActor';

interface DeliveryState {
  /** Attempts whose outcome is known. */
  attempts: number;
  /**
   * Attempts begun, so each gets a number of its own. On Dapr an attempt cut off by a placement
   * change may still finish on its old host while its retry runs on the new one: both send, and
   * the retry (begun after the first, so it sees its in-flight mark) must be recorded as a second
   * attempt, marked, not dropped as a repeat of the first.
   */
  begun?: number;
  done: boolean;
  /** Set, durably, before an attempt starts and cleared by its outcome: found set, a crash cut one short. */
  in_flight: boolean;
  /** Recipients whose delivery is over: accepted (sent) or refused for good (bounced). Never sent to again. */
  recipients?: Record<string, Exclude<DomainResult, 'deferred'>>;
  /** Outcomes the message actor has not been told yet (it could not be reached). */
  unrecorded?: Unrecorded[];
  /** The slot the tenant's open reputation breaker gave this message (ms since epoch): it goes then. */
  slot?: number;
  /**
   * Held (by a breaker or the warmup) until then, ms since epoch, on the retry reminder: a
   * hand-over before it (the message's watchdog, which sees no outcome yet) is not attempted.
   */
  held_until?: number;
  /** A `queued` reminder may be set (a retry came to the fair queue): the attempt deletes it. */
  queued?: true;
}

/**
 * Where a broker may lose a hand-over before its subscriber holds it (not deliversUntilHandled),
 * the reminder that brings a retry waiting in the (in-memory) fair queue back after a crash: set
 * by the retry's firing, renewed by its own (`queueLease`), deleted by the attempt. Its data is
 * the retry's place (a QueuePlace). A first hand-over is watched by the message's actor instead.
 * Elsewhere the held hand-over does it (actors/delivery/dispatch.ts).
 */
export const QUEUED = 'queued';

/** The place a retry takes in the fair queue when its reminder fires (the `retry` reminder's data). */
type RetryPlace = Omit<QueuePlace, 'queued_at'>;

interface Unrecorded {
  outcome: AttemptOutcome;
  tenant_id: string;
}

const RECORD_RETRY_MS = 5_000;

/** Puts an outcome on the message's timeline, and suppresses the recipients of a hard bounce. */
async function recordOutcome(turn: ActorTurn, { outcome, tenant_id }: Unrecorded): Promise<void> {
  await actor(turn, messageActor, turn.actorId).recordAttempt(outcome);
  // Only a hard bounce says the address is bad: a block is about the sender or its content.
  if (outcome.result === 'bounced' && outcome.bounce_type === 'hard') {
    for (const to of outcome.recipients ?? []) {
      await actor(turn, recipientActor, recipientActorId(tenant_id, to)).suppress({
        reason: 'hard_bounce',
        detail: outcome.response,
      });
    }
  }
}

/** Records each outcome in turn; answers those not recorded (from the first that failed on), to try again later. */
async function recordOutcomes(turn: ActorTurn, pending: Unrecorded[]): Promise<Unrecorded[]> {
  for (const [i, u] of pending.entries()) {
    try {
      await recordOutcome(turn, u);
    } catch {
      return pending.slice(i);
    }
  }
  return [];
}

/** An outcome's recipients, and their domain when they are on one (through a relay they may be on several). */
function whom(recipients: string[]): Pick<AttemptOutcome, 'domain' | 'recipients'> {
  const domains = new Set(recipients.map(domainOf));
  return domains.size === 1 ? { domain: [...domains][0]!, recipients } : { recipients };
}

export interface DeliveryDeps {
  /** How live mail leaves: the relay when one is configured, direct MX delivery otherwise. */
  transport: Transport;
  /** The operator's receipt signing keys (mta/receipt.keys.ts). */
  receiptKeys: ReceiptSigner;
  /** Waits between attempts, in ms; when they run out the message soft-bounces. */
  retrySchedule: number[];
  /** How long after it is due a message may still be retried, ms; past it, it soft-bounces. */
  horizonMs: number;
  /** The DKIM keys of a tenant's verified domain (tenancy/domains.ts); null: not one, the message goes unsigned. */
  signers: { signerFor(tenantId: string, fromDomain: string): Promise<DkimSigner | null> };
  /** The reputation breaker's settings: whether mail may go is the tenant's breakers' to say. */
  breaker: BreakerSettings;
  /** The warmup's settings (GATEPOST_WARMUP_*): a new sending domain's caps, and each source address's. */
  warmup: WarmupSettings;
  /** The local addresses direct delivery connects from (GATEPOST_SOURCE_IPS); empty: the host's route. */
  sourceIps: string[];
  /** Counts each transaction by outcome, with its duration. */
  metrics?: Metrics;
  /** A line per transaction, naming the message and the request that made it. */
  log?: EventLog;
}

/** What watching a delivery needs: the counters and the log, or neither. */
export type Observers = Pick<DeliveryDeps, 'metrics' | 'log'>;

/** Counts one transaction (or a capture) and writes its line. */
function observe(
  { metrics = uncounted, log = unlogged }: Observers,
  record: Pick<MessageRecord, 'id' | 'request_id'>,
  outcome: AttemptOutcome,
  startedAt: number,
): void {
  const ms = performance.now() - startedAt;
  metrics.delivery(outcome.result, ms / 1000);
  const fields = {
    req_id: record.request_id ?? null,
    message_id: record.id,
    attempt: outcome.attempt,
    domain: outcome.domain ?? null,
    outcome: outcome.result,
    smtp_code: outcome.smtp_code,
    ms: Math.round(ms),
  };
  // A sandbox capture's line is a debug one: its message is in the capture inbox and on its
  // timeline, and at info it was a second line a sandbox send (3.6 us of the event loop, bench:send).
  if (outcome.result === 'captured') log.debug(fields, 'delivery attempt');
  else log.info(fields, 'delivery attempt');
}

/** The bytes to hand over, or why there are none. */
type Signed = Outgoing | { failure: DeliveryReport };

/** Who holds the DKIM keys of a tenant's verified domains. */
type Signers = DeliveryDeps['signers'];

/**
 * The DKIM signer of the message's From domain, asked once an attempt or capture: null when that
 * is not a verified domain of its tenant; `error` when its keys cannot be had now (a sealed key).
 */
type FromSigner = { signer: DkimSigner | null; domain: string | null } | { error: unknown };

async function fromSigner(signers: Signers, record: MessageRecord, content: RenderedContent): Promise<FromSigner> {
  const from = parseMailbox(content.from)?.address;
  if (!from) return { signer: null, domain: null };
  const domain = domainOf(from).toLowerCase();
  try {
    const signer = await signers.signerFor(record.tenant_id, domain);
    return { signer, domain: signer ? domain : null };
  } catch (error) {
    return { error };
  }
}

/**
 * The message as it leaves: composed, and DKIM-signed when its From domain is a verified domain
 * of its tenant. Mail from a verified domain never leaves unsigned (a sealed key that cannot be
 * opened, say): it waits. A sandbox capture is made by the same steps (`capturedSource`).
 */
async function outgoing(found: FromSigner, record: MessageRecord, content: RenderedContent): Promise<Signed> {
  if ('error' in found) return { failure: unanswered('transient', `DKIM signing failed: ${String(found.error)}`) };
  const at = { messageId: record.message_id_header, date: new Date(record.created_at) };
  try {
    return await outgoingBytes(content, at, found.signer);
  } catch (error) {
    if (error instanceof OutgoingFailed && error.stage === 'sign') {
      return { failure: unanswered('transient', `DKIM signing failed: ${error.message}`) };
    }
    throw error;
  }
}

export function deliveryActor(deps: DeliveryDeps) {
  /**
   * One live attempt, step by step: the bytes, then each transaction still to do (the
   * envelope, the hand-over, what it came to, the receipt of an acceptance). Answers each
   * transaction's outcome.
   */
  async function deliver(
    turn: ActorTurn,
    record: MessageRecord,
    content: RenderedContent,
    attempt: number,
    pending: string[][],
    found: FromSigner,
    sourceIp: string | null,
  ): Promise<AttemptOutcome[]> {
    // Signed between the bytes and the hand-over, so both signatures cover exactly what is sent,
    // and the receipt's hash is of the signed bytes.
    const signed = await outgoing(found, record, content);
    const from = returnPath(record, content, 'failure' in signed ? null : signed.dkim);
    const due = Date.parse(record.send_at ?? record.created_at);
    const policy = { schedule: deps.retrySchedule, horizon: due + deps.horizonMs };
    const outcomes: AttemptOutcome[] = [];
    for (const to of pending) {
      const startedAt = performance.now();
      // A transport answers every failure as a report; one that throws all the same defers, never loses, the message.
      const report =
        'failure' in signed
          ? signed.failure
          : await deps.transport
              .send({ from, to, raw: signed.raw, ...(sourceIp ? { source: sourceIp } : {}) })
              .catch((error: unknown) => unanswered('transient', `Delivery failed: ${String(error)}`));
      // Recipients refused at RCPT TO have outcomes of their own (their 4xx deferred, their 5xx
      // bounced), whether the others were accepted or refused too.
      const refused = report.refused ?? [];
      const taken = to.filter((r) => !refused.some((x) => x.to === r));
      const outcome: AttemptOutcome = { ...classify(report, attempt, policy, Date.now()), ...whom(taken) };
      const alone = refused.map((x): AttemptOutcome => {
        const own = { ...report, result: x.result, reply: x.reply, stage: 'rcpt' as const, accepted_at: null, refused: [] };
        return { ...classify(own, attempt, policy, Date.now()), ...whom([x.to]) };
      });
      if (report.result === 'accepted' && !('failure' in signed)) {
        const draft = receiptDraft(report, {
          message_id: record.id,
          message_id_header: record.message_id_header,
          attempt,
          raw: signed.raw,
          dkim: signed.dkim,
          envelope: { from, to: taken.join(', ') },
        });
        const { id, jws } = await issueReceipt(turn, deps.receiptKeys, record.tenant_id, draft);
        outcome.receipt = { id, jws };
      }
      // Every recipient refused one by one: the transaction's own outcome names nobody.
      const these = taken.length > 0 ? [outcome, ...alone] : alone;
      for (const o of these) observe(deps, record, o, startedAt);
      outcomes.push(...these);
    }
    return outcomes;
  }

  /**
   * The source address this attempt connects from (docs/deliverability.md): none unless
   * GATEPOST_SOURCE_IPS lists some; with warmup on, the first in the message's order
   * (`sourceOrder`) whose ramp has room, its count taken; none with room: held until the
   * earliest of their next windows.
   */
  async function sourceFor(
    turn: ActorTurn,
    record: MessageRecord,
    attempt: number,
  ): Promise<{ ip: null; taken?: undefined } | { ip: string; taken?: SourceTaken } | { held: number }> {
    const ips = sourceOrder(deps.sourceIps, record.id, attempt);
    if (ips.length === 0) return { ip: null };
    if (!deps.warmup.enabled) return { ip: ips[0]! };
    let at = Infinity;
    for (const ip of ips) {
      const answer = await actor(turn, sourceIpActor, sourceIpActorId(ip)).take({ stream: record.stream, settings: deps.warmup });
      if (answer.go) return { ip, taken: answer.taken };
      at = Math.min(at, answer.at);
    }
    return { held: at };
  }

  return defineActor({
    type: DELIVERY_ACTOR,
    methods: {
      /**
       * Marks an attempt as started, in its own durable turn, so that after a crash the next
       * attempt knows this one may have reached the remote host. Answers whether to attempt at all.
       */
      async begin(turn): Promise<{ attempt: boolean; interrupted: boolean; number?: number }> {
        const s = (await turn.get<DeliveryState>('delivery')) ?? { attempts: 0, done: false, in_flight: false };
        if (s.done || (s.held_until !== undefined && Date.now() < s.held_until)) return { attempt: false, interrupted: false };
        const interrupted = s.in_flight;
        const number = Math.max(s.begun ?? 0, s.attempts) + 1;
        turn.set('delivery', { ...s, begun: number, in_flight: true } satisfies DeliveryState);
        return { attempt: true, interrupted, number };
      },

      /**
       * `number`: the attempt's number from `begin` (without one, it takes the next). Answers
       * what the message came to: sent (every domain accepted), bounced (every
       * domain is done, one or more refused), deferred (a domain waits for a retry); or held
       * (the tenant's open reputation breaker holds it, with no attempt, until its slot).
       */
      async attempt(
        turn,
        args: { interrupted: boolean; number?: number },
      ): Promise<AttemptOutcome['result'] | 'skipped' | 'held'> {
        const s = (await turn.get<DeliveryState>('delivery')) ?? { attempts: 0, done: false, in_flight: false };
        if (s.done) return 'skipped';
        const message = actor(turn, messageActor, turn.actorId);
        const view = await message.get(undefined).catch(orNullIfGone);
        // Gone (its retention ended while a retry waited, or its admission never committed, its
        // hand-over having gone first: ActorTurn.handOver): nothing is left to deliver, or to keep.
        if (!view) {
          forget(turn);
          return 'skipped';
        }
        const { record, content } = view;
        const attempt = args.number ?? s.attempts + 1;
        const done = { ...s.recipients };

        // Whether the message may go now is decided here, before it is built: an open breaker
        // (the tenant's or its sending domain's) or the domain's warmup cap holds it (on the retry
        // reminder) for later, never refuses it.
        // The verified sending domain (its breaker and warmup); a signer that cannot be had now is
        // outgoing()'s to report, and the mail waits there.
        const found = await fromSigner(deps.signers, record, content);
        const sendingDomain = 'domain' in found ? found.domain : null;
        const all = envelopeRecipients(content);
        const hold = (held: Exclude<DeliveryAdmission, { go: true }>) => {
          turn.setReminder('retry', held.at, retryPlace(record, all, done));
          if (s.queued) turn.deleteReminder(QUEUED);
          const begun = s.begun === attempt ? attempt - 1 : s.begun;
          // A breaker's hold is a slot of its own the message keeps; a warmup window is no slot.
          const slot = held.by === 'breaker' ? held.at : s.slot;
          const next: DeliveryState = { ...s, begun, in_flight: false, slot, held_until: held.at, queued: undefined };
          turn.set('delivery', next);
          return 'held' as const;
        };
        // The source address first (its warmup, when several are listed), then the tenant's say;
        // held by the tenant, the address's count is given back.
        const source = await sourceFor(turn, record, attempt);
        if ('held' in source) return hold({ go: false, at: source.held, by: 'warmup' });
        // The destination's provider takes its share of the sending domain's warmup caps.
        const destination = retryPlace(record, all, done).destination;
        const provider =
          sendingDomain && deps.warmup.enabled && deps.transport.providerOf && destination
            ? await deps.transport.providerOf(destination)
            : null;
        const held = await actor(turn, tenantActor, record.tenant_id).admitDelivery({
          stream: record.stream,
          domain: sendingDomain,
          provider,
          settings: deps.breaker,
          warmup: deps.warmup,
          ...(s.slot !== undefined ? { slot: s.slot } : {}),
        });
        if (!held.go) {
          if (source.taken) await actor(turn, sourceIpActor, sourceIpActorId(source.ip)).giveBack({ taken: source.taken });
          return hold(held);
        }
        const pending = deps.transport.transactions(all.filter((to) => !done[to]));
        const outcomes = await deliver(turn, record, content, attempt, pending, found, source.ip);
        for (const o of outcomes) {
          if (sendingDomain) o.sending_domain = sendingDomain;
          if (source.ip) o.source_ip = source.ip;
        }
        for (const o of outcomes) {
          if (o.result === 'deferred') continue;
          for (const to of o.recipients ?? []) done[to] = o.result === 'sent' ? 'sent' : 'bounced';
        }
        const status = messageStatusOf(all.map((to) => done[to] ?? 'deferred'));
        for (const o of outcomes) o.message_status = status;
        if (args.interrupted)
          for (const o of outcomes) o.response = `${o.response} (an earlier attempt was cut short by a restart)`;

        const retryAt = outcomes.flatMap((o) => (o.retry_at ? [Date.parse(o.retry_at)] : []));
        const finished = retryAt.length === 0;
        if (!finished) turn.setReminder('retry', Math.min(...retryAt), retryPlace(record, all, done));
        if (s.queued) turn.deleteReminder(QUEUED);
        // The attempt is done whatever happens next: should telling the message actor fail, the
        // outcomes wait in our state for the 'record' reminder, and a repeated call of this
        // method (a runtime retrying it) finds the delivery done instead of sending again.
        const unrecorded = await recordOutcomes(
          turn,
          outcomes.map((outcome) => ({ outcome, tenant_id: record.tenant_id })),
        );
        const next: DeliveryState = { attempts: attempt, done: finished, in_flight: false, recipients: done };
        if (unrecorded.length > 0) {
          next.unrecorded = unrecorded;
          turn.setReminder('record', Date.now() + RECORD_RETRY_MS);
        }
        turn.set('delivery', next);
        return statusResult(status);
      },

      /** The message's retention ended: nothing is left to deliver or to deduplicate. */
      async forget(turn): Promise<void> {
        forget(turn);
      },
    },

    async onReminder(turn, name, data) {
      if (name === 'record') {
        const s = await turn.get<DeliveryState>('delivery');
        if (!s?.unrecorded) return;
        // Throws: the reminder is tried again (recording an outcome twice keeps one).
        for (const u of s.unrecorded) await recordOutcome(turn, u);
        const { unrecorded: _, ...rest } = s;
        turn.set('delivery', rest satisfies DeliveryState);
        return;
      }
      // A retry, or one the fair queue lost to a crash, goes back through the outbox, the same
      // path as the first attempt, with a reminder that brings it back should it not be attempted
      // where the held hand-over does not. Only live deliveries are retried.
      if (name === 'retry' || name === QUEUED) {
        const now = Date.now();
        const place: QueuePlace = name === QUEUED ? (data as QueuePlace) : { ...(data as RetryPlace), queued_at: now };
        turn.publish(MESSAGE_READY, { message_id: turn.actorId, sandbox: false, ...place } satisfies MessageReady);
        if (turn.deliversUntilHandled) return;
        turn.setReminder(QUEUED, now + queueLease(now - place.queued_at), place);
        const s = await turn.get<DeliveryState>('delivery');
        if (s && !s.queued) turn.set('delivery', { ...s, queued: true } satisfies DeliveryState);
      }
    },
  });
}

/** Where a retry waits in the fair queue: for a slot of its first recipient's domain still to deliver to. */
function retryPlace(record: MessageRecord, all: string[], done: Record<string, unknown>): RetryPlace {
  const to = all.find((r) => !done[r]);
  return { tenant_id: record.tenant_id, stream: record.stream, destination: to ? domainOf(to) : '' };
}

/** The message status as an attempt's result. */
function statusResult(status: AttemptOutcome['message_status']): AttemptOutcome['result'] {
  return status === 'sent' ? 'sent' : status === 'bounced' ? 'bounced' : 'deferred';
}

/**
 * How a sandbox message is captured, in its MessageActor's turn of the hand-over
 * (`captureSandbox`, given this by messageActorWith): put in the inbox, never delivered, and the
 * capture's outcome for the timeline returned. The inbox keeps one capture a message, so a
 * hand-over repeated captures once. `onCapture` hears of each capture's tenant once it is in the
 * inbox (the inbox's live updates).
 */
export function sandboxCapture(
  catalog: Catalog,
  { signers, onCapture, observers = {} }: { signers: Signers; onCapture?: (tenantId: string) => void; observers?: Observers },
): SandboxCapture {
  return async ({ record, content }) => {
    const startedAt = performance.now();
    const source = await capturedSource(signers, record, content);
    await putInInbox(catalog, { ...record, content }, source.signed);
    onCapture?.(record.tenant_id);
    const outcome = capturedOutcome(1, source.note);
    observe(observers, record, outcome, startedAt);
    return outcome;
  };
}

/**
 * What a capture keeps of the message as it would leave. From a verified domain of its tenant:
 * the exact bytes delivery would send, composed and signed by the same steps (`outgoing`, on the
 * outgoing thread). From any other domain: nothing, and why (a live send would go unsigned, or
 * not at all); the inbox composes its source when it is read, so such a capture composes nothing.
 * A key that cannot be used (sealed, say) captures unsigned and says so: a live send would wait.
 */
async function capturedSource(
  signers: Signers,
  record: MessageRecord,
  content: RenderedContent,
): Promise<{ signed: Outgoing | null; note: string }> {
  const unsigned = (why: string) => ({ signed: null, note: `${CAPTURED} Unsigned: ${why}.` });
  const found = await fromSigner(signers, record, content);
  if ('error' in found) return unsigned(`DKIM signing failed: ${String(found.error)}`);
  const { signer } = found;
  if (!signer) return unsigned('the From domain is not a verified sending domain of the tenant');
  const at = { messageId: record.message_id_header, date: new Date(record.created_at) };
  try {
    const signed = await outgoingBytes(content, at, signer);
    const dkim = signed.dkim!;
    return { signed, note: `${CAPTURED} DKIM-signed as it would be sent (d=${dkim.d}, s=${dkim.s.join(', ')}).` };
  } catch (error) {
    if (error instanceof OutgoingFailed && error.stage === 'sign') return unsigned(`DKIM signing failed: ${error.message}`);
    throw error;
  }
}

/** Everything this actor keeps of its message, gone with it. */
function forget(turn: ActorTurn): void {
  turn.delete('delivery');
  turn.deleteReminder('retry');
  turn.deleteReminder(QUEUED);
}

function orNullIfGone(error: unknown): null {
  if (error instanceof GatepostError && error.code === 'not_found') return null;
  throw error;
}

/** What a capture puts in the inbox: the message's ids and its rendered content. */
type InboxEntry = Pick<MessageRecord, 'id' | 'tenant_id' | 'key_id' | 'message_id_header'> & { content: RenderedContent };

/**
 * Puts a sandbox message in its tenant's capture inbox, rendered as it would have been sent, with
 * the signed bytes when it was signed.
 */
function putInInbox(catalog: Catalog, message: InboxEntry, signed: Outgoing | null): Promise<void> {
  const { content } = message;
  return catalog.putCapture({
    message_id: message.id,
    tenant_id: message.tenant_id,
    from: content.from,
    to: content.to,
    subject: content.subject,
    html: content.html,
    text: content.text,
    headers: { ...content.headers, 'Message-ID': message.message_id_header },
    captured_at: isoTime(),
    key_id: message.key_id,
    dkim: signed?.dkim ?? null,
    source: signed ? signed.raw.toString('base64') : null,
  });
}

const CAPTURED = 'Captured in the sandbox inbox; not delivered.';

const capturedOutcome = (attempt: number, response: string): AttemptOutcome => ({
  attempt,
  result: 'captured',
  smtp_code: null,
  enhanced_code: null,
  response,
  mx: null,
  ip: null,
  tls: null,
  connected_at: null,
  accepted_at: null,
  retry_at: null,
});

/**
 * The envelope sender: a message from a verified domain (the one it is signed for) carries a VERP
 * address on that domain's bounce subdomain, so a bounce names its message (mta/verp.ts); any
 * other, the From address.
 */
function returnPath(record: MessageRecord, content: RenderedContent, dkim: { d: string } | null): string {
  if (dkim) return verpAddress(record.id, returnPathDomain(dkim.d));
  return parseMailbox(content.from)?.address ?? content.from;
}
