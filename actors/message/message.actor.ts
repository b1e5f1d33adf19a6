// MessageActor, one per message: admission (the checkpoint no ingress can skip), the timeline,
// the send_at reminder, and retention. Its `admit` method is the only code that creates a
// message, and it checks, serialised in its own turn, everything that needs state or could be
// skipped: idempotency, content policy, suppression, and it takes the send from its tenant's
// quota itself, so a caller that skipped the gate still cannot skip a rule.
import { actor, defineActor, type ActorTurn } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { newId } from '../../lib/ids.ts';
import { isoTime } from '../../lib/now.ts';
import { domainOf } from '../../mail/address.ts';
import { queueLease } from '../../mta/fair.queue.ts';
import { checkContent } from '../../mail/policy.ts';
import { recipientActor, recipientActorId, suppressionOf } from '../recipient/recipient.actor.ts';
import { NO_INDEX, type SuppressionIndex } from '../recipient/suppression.index.ts';
import type { QuotaTally } from '../tenant/quota.tally.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { batchActor } from '../batch/batch.actor.ts';
import {
  RETENTION_MS,
  messageView,
  responseOf,
  type AdmitArgs,
  type AdmitResult,
  type AttemptOutcome,
  type BatchHold,
  type DeliveryView,
  type MessageReady,
  type MessageOutcomes,
  type MessageRecord,
  type LateReport,
  type LateReportResult,
  type TrackingFacts,
  type TrackResult,
  type UnsubscribeArgs,
} from './message.state.ts';
import { lateBounceType, recipientsOf, recordedAlready, reportEvent } from './message.report.ts';
import { normalizeAddress } from '../../mail/address.ts';
import { signedWith, type TokenClaim } from '../../mail/tracking.token.ts';
import type { RenderedContent } from '../../mail/content.ts';
import type { Quota } from '../../store/catalog.port.ts';
import {
  EMAIL_EVENTS,
  LIFECYCLE_EVENTS,
  envelopeOf,
  type EmailEvent,
  type EventType,
  type StoredEvent,
} from '../../events/email.event.ts';

export const MESSAGE_ACTOR = 'MessageActor';
/** Published when a message is due for delivery (a MessageReady). */
export const MESSAGE_READY = 'message.ready';
/** Published when a message's retention ends and its state is gone: `{ message_id }`. */
export const MESSAGE_EXPIRED = 'message.expired';

/**
 * How a turn publishes its lifecycle events: kept with its commit, or (a turn run for a
 * publication delivered until handled, which publishes them again when a redelivery finds them
 * recorded) published again on replay (ActorTurn.publishAgainOnReplay).
 */
type Publishing = 'kept' | 'againOnReplay';

/** Publishes a lifecycle event of the message on `email.events`. */
function publishEvent(turn: ActorTurn, of: MessageRecord | MessageOutcomes, event: StoredEvent, how: Publishing): void {
  const published: EmailEvent = { tenant_id: of.tenant_id, event: envelopeOf(turn.actorId, event) };
  if (of.origin) published.origin = of.origin;
  if (how === 'kept') turn.publish(EMAIL_EVENTS, published);
  else turn.publishAgainOnReplay(EMAIL_EVENTS, published);
}

/** Appends an event to the record's timeline (before the hand-over) or to the outcomes (after it). */
function appendEvent(
  turn: ActorTurn,
  into: MessageRecord | MessageOutcomes,
  type: EventType,
  data: Record<string, unknown> = {},
  how: Publishing = 'kept',
): void {
  const event: StoredEvent = { id: newId('evt'), type, created_at: isoTime(), data };
  into.events.push(event);
  if (LIFECYCLE_EVENTS.has(type)) publishEvent(turn, into, event, how);
}

/** The key the message's tracking tokens are signed with; absent on messages from before tracking. */
interface TrackingState {
  key: string;
}

const readRecord = (turn: ActorTurn) => turn.get<MessageRecord>('record');

const gone = () => new GatepostError('not_found', 'No message has that id.');

/** The message as its readers see it, outcomes included. */
async function loadView(turn: ActorTurn): Promise<MessageRecord> {
  const record = await readRecord(turn);
  if (!record) throw gone();
  return messageView(record, await turn.get<MessageOutcomes>('outcomes'));
}

/** The outcomes of a message that has none yet: made from its record by the first. */
function outcomesOf(record: MessageRecord): MessageOutcomes {
  const made: MessageOutcomes = {
    tenant_id: record.tenant_id,
    to: record.to,
    created_at: record.created_at,
    status: null,
    events: [],
  };
  if (record.origin) made.origin = record.origin;
  return made;
}

/** The outcomes, to record one more: the first outcome makes them from the record (`read`, if the turn has it). */
async function loadOutcomes(turn: ActorTurn, read?: MessageRecord): Promise<MessageOutcomes> {
  const outcomes = await turn.get<MessageOutcomes>('outcomes');
  if (outcomes) return outcomes;
  const record = read ?? (await readRecord(turn));
  if (!record) throw gone();
  return outcomesOf(record);
}

/** Everything a message keeps goes: its retention ended, or its batch rolled it back. */
function forget(turn: ActorTurn): void {
  turn.delete('record');
  turn.delete('content');
  turn.delete('outcomes');
  turn.delete('tracking');
}

/**
 * A queued message with no delivery outcome this long after it was handed over is handed over
 * again. The publication is at-least-once on every runtime, but a broker may hold a message for a
 * consumer that died; this keeps the guarantee in the actor, whatever the broker does. A runtime
 * that delivers until its subscriber is done (`deliversUntilHandled`: the embedded one, and Dapr
 * with Redis Streams) needs no watchdog: a sandbox message's subscriber returns once the capture
 * is recorded, and a live one's holds the hand-over (runtime.port.ts's Held) for as long as the
 * message waits in the fair queue, which is in memory. Elsewhere a live message is watched for
 * as long as it has waited (`queueLease`).
 */
export const WATCHDOG_MS = 30_000;

// One reminder, 'watch', does watching, batch resolution and retention: it is due after a
// hand-over (where the runtime needs it) or WATCHDOG_MS after a held admission and, firing, hands
// over again (or asks the held message's batch). A delivery outcome moves it (or sets it) to the
// end of the retention period, so a message delivered in time never fires it before then; at the
// end it deletes the message.
function watch(turn: ActorTurn, dueAt = Date.now() + WATCHDOG_MS): void {
  turn.setReminder('watch', dueAt);
}

const expiresAt = (message: { created_at: string }) => Date.parse(message.created_at) + RETENTION_MS;

/** When the message came to the fair queue: its `message.queued` event (handed over again, it keeps its place). */
function queuedAt(record: MessageRecord): number {
  const queued = record.events.find((e) => e.type === 'message.queued');
  return Date.parse(queued?.created_at ?? record.created_at);
}

/**
 * A live message's hand-over carries its place in the fair queue, so that the delivery side
 * takes it with no turn of its own: a DeliveryActor turn with a nested read of this actor, which
 * cost about 17 % of bench:deliver's rate (bench/RESULTS.md, eighteenth pass) and 7 of a live
 * send's 53 calls between processes on Dapr (now 46, test/dapr/calls.dapr.test.ts).
 */
function handOver(turn: ActorTurn, record: MessageRecord, admitting = false): void {
  // The admission's hand-over may go before its commit (ActorTurn.handOver): its subscriber acts
  // only through this actor, which has no record should the admission not commit. Any later
  // turn's goes after it: the record it would find then says what the turn had not saved.
  const publish = (ready: MessageReady) => (admitting ? turn.handOver(MESSAGE_READY, ready) : turn.publish(MESSAGE_READY, ready));
  const queued_at = queuedAt(record);
  if (record.sandbox) {
    publish({ message_id: record.id, sandbox: true, tenant_id: record.tenant_id, queued_at });
    if (!turn.deliversUntilHandled) watch(turn);
    return;
  }
  publish({
    message_id: record.id,
    sandbox: false,
    tenant_id: record.tenant_id,
    stream: record.stream,
    destination: domainOf(record.to),
    queued_at,
  } satisfies MessageReady);
  if (turn.deliversUntilHandled) return;
  const now = Date.now();
  watch(turn, now + queueLease(now - queued_at));
}

function queue(turn: ActorTurn, record: MessageRecord, admitting = false): void {
  record.status = 'queued';
  appendEvent(turn, record, 'message.queued');
  handOver(turn, record, admitting);
}

/** An admitted message goes on: scheduled for its send_at, or queued now. */
function release(turn: ActorTurn, record: MessageRecord, admitting = false): void {
  delete record.hold;
  if (record.send_at) {
    record.status = 'scheduled';
    appendEvent(turn, record, 'message.scheduled', { send_at: record.send_at });
    turn.setReminder('send', Date.parse(record.send_at));
  } else {
    queue(turn, record, admitting);
  }
}

function settle(turn: ActorTurn, record: MessageRecord, outcome: 'committed' | 'aborted'): void {
  if (outcome === 'committed') {
    release(turn, record);
    turn.set('record', record);
  } else {
    // Rolled back: the message never was, and its idempotency key is free for the retry.
    forget(turn);
    turn.deleteReminder('watch');
  }
}

/** Answers an admission of a message that exists: a replay, a refusal, or a held message's new attempt. */
function admitAgain(turn: ActorTurn, existing: MessageRecord, args: AdmitArgs): AdmitResult {
  // The gate derives ids by mode (sandbox or live): a message of the other mode is never a replay.
  if (existing.tenant_id !== args.tenant_id || existing.sandbox !== args.sandbox || existing.request_hash !== args.request_hash) {
    throw new GatepostError('idempotency_key_reused');
  }
  if (existing.status !== 'held') return { response: responseOf(existing), replayed: true };
  if (existing.hold!.batch_id !== args.hold?.batch_id) throw new GatepostError('idempotency_key_in_flight');
  // A retry of the batch that held this message: its new attempt takes the message over.
  if (existing.hold!.attempt !== args.hold.attempt) {
    existing.hold = args.hold;
    watch(turn);
    turn.set('record', existing);
  }
  return { response: responseOf(existing), replayed: false };
}

const limited = (q: Quota) => q.per_second !== null || q.per_day !== null;

/** Refuses the send if the recipient, or anyone copied, is suppressed: the index says who to ask. */
async function checkSuppressions(
  turn: ActorTurn,
  index: SuppressionIndex,
  tenantId: string,
  { to, copies }: Pick<ReturnType<typeof checkContent>, 'to' | 'copies'>,
): Promise<void> {
  for (const { address } of [to, ...copies]) {
    const suppression = await suppressionOf(turn, index, tenantId, address);
    if (suppression) {
      const field = address === to.address ? 'to' : 'cc';
      throw new GatepostError(
        'recipient_suppressed',
        `${address} is suppressed (${suppression.reason}); the message was not sent.`,
        {
          details: [{ field, message: `${address} is suppressed: ${suppression.reason}` }],
        },
      );
    }
  }
}

/** What admission reads and counts besides the actors it calls. */
export interface AdmissionDeps {
  /** Which recipients may be suppressed, whose actors it asks (NO_INDEX: all of them). */
  suppressions: SuppressionIndex;
  /** Counts the sends of tenants without limits (null: each is taken from its TenantActor). */
  tally: Pick<QuotaTally, 'count' | 'takePending'> | null;
}

/** `admit`: the only code that creates a message. */
const admitWith =
  ({ suppressions, tally }: AdmissionDeps) =>
  async (turn: ActorTurn, args: AdmitArgs): Promise<AdmitResult> => {
    // Without an idempotency key, the message's id was made for this call: only the runtime's
    // retry of the call can find it there (ActorTurn.getNew).
    const existing = await (args.idempotency_key === null ? turn.getNew<MessageRecord>('record') : readRecord(turn));
    if (existing) return admitAgain(turn, existing, args);
    const mailboxes = checkContent(args.content);
    await checkSuppressions(turn, suppressions, args.tenant_id, mailboxes);
    // Last, so that a replay or a refused send takes nothing from the quota. Should this turn
    // fail to save after it, the send stays counted: the quota errs on the side of sending less.
    // A tenant without limits has nothing to be refused by: the tally counts its send, with no
    // TenantActor turn (on Dapr, three sidecar calls), so that a daily limit set later counts it.
    const tenant = actor(turn, tenantActor, args.tenant_id);
    if (tally && !limited(args.quota_limits)) {
      tally.count(args.tenant_id);
    } else {
      // Sends tallied before the limit was set count against it.
      const pending = tally?.takePending(args.tenant_id);
      if (pending) await tenant.tally(pending);
      await tenant.take({ quota: args.quota_limits });
    }
    const to = mailboxes.to.address;

    const record: MessageRecord = {
      id: turn.actorId,
      tenant_id: args.tenant_id,
      key_id: args.key_id,
      sandbox: args.sandbox,
      stream: args.stream,
      ingress: args.ingress,
      request_hash: args.request_hash,
      idempotency_key: args.idempotency_key,
      request_id: args.request_id ?? null,
      message_id_header: `<${turn.actorId}@${domainOf(mailboxes.from.address)}>`,
      tags: args.tags,
      status: args.send_at ? 'scheduled' : 'queued',
      created_at: isoTime(),
      send_at: args.send_at,
      to,
      events: [],
    };
    if (args.origin) record.origin = args.origin;
    appendEvent(turn, record, 'message.accepted', { to, stream: args.stream, ingress: args.ingress, sandbox: args.sandbox });
    if (args.hold) {
      record.status = 'held';
      record.hold = args.hold;
      // Nothing decided by then: the watchdog asks the batch, which rolls the attempt back.
      watch(turn);
    } else {
      release(turn, record, true);
    }
    turn.set('content', args.content);
    if (args.tracking_key) turn.set('tracking', { key: args.tracking_key } satisfies TrackingState);
    turn.set('record', record);
    return { response: responseOf(record), replayed: false };
  };

/** Puts an attempt's outcome on the timeline (the outcomes), once however often it is told. */
function recordOutcome(turn: ActorTurn, outcomes: MessageOutcomes, outcome: AttemptOutcome, how: Publishing = 'kept'): void {
  // Told twice (a runtime retrying the call): the timeline has it already. An attempt has an
  // outcome per transaction (per recipient domain, or one through a relay), and one per
  // recipient refused at RCPT TO: their recipients tell them apart.
  const whom = String(outcome.recipients ?? null);
  if (outcomes.events.some((e) => e.data.attempt === outcome.attempt && String(e.data.recipients ?? null) === whom)) return;
  const o = outcome;
  const common = {
    to: outcomes.to,
    attempt: o.attempt,
    smtp_code: o.smtp_code,
    enhanced_code: o.enhanced_code,
    response: o.response,
    mx: o.mx,
    ip: o.ip,
    tls: o.tls,
    connected_at: o.connected_at,
    accepted_at: o.accepted_at,
    stage: o.stage ?? null,
    ...(o.domain ? { domain: o.domain } : {}),
    ...(o.recipients ? { recipients: o.recipients } : {}),
    ...(o.sending_domain ? { sending_domain: o.sending_domain } : {}),
    ...(o.source_ip ? { source_ip: o.source_ip } : {}),
  };
  switch (outcome.result) {
    case 'sent':
    case 'captured':
      outcomes.status = o.message_status ?? 'sent';
      appendEvent(
        turn,
        outcomes,
        'email.sent',
        {
          ...common,
          sandbox: outcome.result === 'captured',
          ...(o.receipt ? { receipt: o.receipt } : {}),
        },
        how,
      );
      break;
    case 'deferred':
      outcomes.status = o.message_status ?? 'deferred';
      appendEvent(turn, outcomes, 'message.deferred', { ...common, retry_at: outcome.retry_at }, how);
      break;
    case 'bounced':
      outcomes.status = o.message_status ?? 'bounced';
      appendEvent(turn, outcomes, 'email.bounced', { ...common, bounce_type: outcome.bounce_type ?? 'hard' }, how);
      break;
  }
  // Something came of the hand-over: nothing left to watch, so the reminder waits for the end
  // of retention now, rather than firing for every message WATCHDOG_MS after its hand-over.
  turn.setReminder('watch', expiresAt(outcomes));
  turn.set('outcomes', outcomes);
}

/** How a sandbox message is captured: given the message as its readers see it, the outcome to put on its timeline. */
export type SandboxCapture = (view: DeliveryView) => Promise<AttemptOutcome>;

/** No inbox: the plain actor captures nothing (a host captures with messageActorWith's). */
const NO_INBOX: SandboxCapture = () => Promise.reject(new Error('this MessageActor was given no sandbox inbox'));

/**
 * `captureSandbox`: one turn reads the message once, captures it, and records the capture. Its
 * caller is the hand-over's subscriber, delivered until it returns: a capture found recorded is
 * that delivery again, whose event may not have gone out, so it publishes the event again.
 */
const captureWith =
  (capture: SandboxCapture) =>
  async (turn: ActorTurn): Promise<'captured' | 'skipped'> => {
    const record = await readRecord(turn);
    if (!record) return 'skipped';
    const outcomes = await loadOutcomes(turn, record);
    const captured = outcomes.events.find((e) => e.type === 'email.sent' && e.data.sandbox === true);
    if (captured) {
      publishEvent(turn, outcomes, captured, 'againOnReplay');
      return 'captured';
    }
    const content = (await turn.get<RenderedContent>('content'))!;
    recordOutcome(turn, outcomes, await capture({ record: messageView(record, outcomes), content }), 'againOnReplay');
    return 'captured';
  };

/**
 * The actor asking every recipient's actor and the TenantActor at each admission;
 * `messageActorWith` reads and counts less.
 */
export const messageActor = defineActor({
  type: MESSAGE_ACTOR,
  methods: {
    admit: admitWith({ suppressions: NO_INDEX, tally: null }),

    /** The decision of a held message's batch: send it, or roll it back as if never admitted. */
    async settle(turn, { hold, outcome }: { hold: BatchHold; outcome: 'committed' | 'aborted' }): Promise<void> {
      const record = await readRecord(turn);
      if (!record || record.status !== 'held') return;
      if (record.hold!.batch_id !== hold.batch_id || record.hold!.attempt !== hold.attempt) return;
      settle(turn, record, outcome);
    },

    async get(turn): Promise<DeliveryView> {
      return { record: await loadView(turn), content: (await turn.get<RenderedContent>('content'))! };
    },

    /** Records a delivery attempt's outcome on the timeline. */
    async recordAttempt(turn, outcome: AttemptOutcome): Promise<void> {
      recordOutcome(turn, await loadOutcomes(turn), outcome);
    },

    /**
     * A sandbox message's hand-over in one turn: captured in the inbox (by the capture this actor
     * is given, messageActorWith), and the capture put on the timeline. Repeated (a hand-over is
     * delivered at least once), it captures again, which the inbox keeps once, and the timeline
     * keeps its one outcome. A message gone (its retention ended while the hand-over waited) is
     * skipped.
     */
    captureSandbox: captureWith(NO_INBOX),

    /**
     * Records a webhook endpoint's final outcome for one of this message's events: delivered, or
     * failed (attempts ran out, or the endpoint was disabled). Not a lifecycle event: not published.
     */
    async recordWebhook(
      turn,
      outcome: {
        delivered: boolean;
        endpoint_id: string;
        event_id: string;
        event_type: string;
        attempts: number;
        status_code: number | null;
        error: string | null;
      },
    ): Promise<void> {
      const outcomes = await loadOutcomes(turn);
      const type = outcome.delivered ? 'webhook.delivered' : 'webhook.failed';
      const { delivered: _, ...data } = outcome;
      const same = (e: StoredEvent) =>
        e.type === type && e.data.endpoint_id === outcome.endpoint_id && e.data.event_id === outcome.event_id;
      // Told twice (a retried call): the timeline has it already.
      if (outcomes.events.some(same)) return;
      appendEvent(turn, outcomes, type, data);
      turn.set('outcomes', outcomes);
    },

    /**
     * What recording a hit on one of the message's links needs (gate/tracking.ts), once the token
     * is found signed with the message's tracking key; null otherwise, and for a message that is
     * gone. Records nothing: opens and clicks are stored apart (docs/tracking.md), and the inbound
     * MX asks this of a mailto unsubscribe token at RCPT.
     */
    async trackingFacts(turn, claim: TokenClaim): Promise<TrackingFacts | null> {
      const tracking = await turn.get<TrackingState>('tracking');
      if (!tracking || claim.message_id !== turn.actorId || !signedWith(tracking.key, claim)) return null;
      const outcomes = await loadOutcomes(turn);
      const sent = outcomes.events.filter((e) => e.type === 'email.sent').at(-1);
      return {
        tenant_id: outcomes.tenant_id,
        to: outcomes.to,
        sent_at: sent?.created_at ?? null,
        ...(outcomes.origin ? { origin: outcomes.origin } : {}),
      };
    },

    /**
     * Records an unsubscribe from the message's unsubscribe link (issue 24), once the token is
     * found signed with the message's tracking key: `refused` otherwise, and for a message that is
     * gone. It suppresses the recipient for the tenant; a repeated one (a provider's POST, then the
     * person's click) is `repeat` and records nothing more.
     */
    async unsubscribe(turn, { claim, user_agent, ip, via }: UnsubscribeArgs): Promise<TrackResult> {
      const tracking = await turn.get<TrackingState>('tracking');
      if (!tracking || claim.kind !== 'unsubscribe' || claim.message_id !== turn.actorId || !signedWith(tracking.key, claim))
        return 'refused';
      const outcomes = await loadOutcomes(turn);
      if (outcomes.events.some((e) => e.type === 'email.unsubscribed')) return 'repeat';
      await actor(turn, recipientActor, recipientActorId(outcomes.tenant_id, outcomes.to)).suppress({
        reason: 'unsubscribe',
        detail: `unsubscribed from message ${turn.actorId}`,
      });
      appendEvent(turn, outcomes, 'email.unsubscribed', { to: outcomes.to, via, user_agent, ip });
      turn.set('outcomes', outcomes);
      return 'recorded';
    },

    /**
     * Records what a report that came back to the message's return path says, days after its
     * sending or at once (docs/bounces.md): `email.bounced` (a hard bounce suppresses the
     * recipient, and a failure makes the message bounced) or `email.complained` (the recipient
     * suppressed). Only for a live message of the tenant the report arrived for, and a recipient
     * the message went to; the same report (or one saying the same) twice records once.
     */
    async recordReport(turn, report: LateReport): Promise<LateReportResult> {
      const record = await readRecord(turn);
      // Another tenant's message is answered as no message at all: a report never learns more.
      if (!record || record.tenant_id !== report.tenant_id)
        return { result: 'refused', reason: 'no such message for this tenant' };
      if (record.sandbox) return { result: 'refused', reason: 'a sandbox message, which was never sent' };
      const outcomes = await loadOutcomes(turn, record);
      const recipients = recipientsOf(record, outcomes);
      const named = report.recipient ? normalizeAddress(report.recipient) : null;
      // A report naming no recipient is about the message's only one, or cannot be placed.
      const recipient = named ?? (recipients.size === 1 ? [...recipients][0]! : null);
      if (!recipient) return { result: 'refused', reason: 'the report names no recipient, and the message had several' };
      if (!recipients.has(recipient)) return { result: 'refused', reason: `${recipient} is not a recipient of the message` };
      const event = reportEvent(report, outcomes.to, recipient);
      // A late report is about the domain the message went out from, as its own outcomes said.
      const sendingDomain = outcomes.events.find((e) => typeof e.data.sending_domain === 'string')?.data.sending_domain;
      if (sendingDomain) event.data.sending_domain = sendingDomain;
      if (recordedAlready(outcomes.events, event)) return { result: 'repeat', recipient };
      const suppress = (reason: 'hard_bounce' | 'complaint', detail: string) =>
        actor(turn, recipientActor, recipientActorId(record.tenant_id, recipient)).suppress({ reason, detail });
      if (report.kind === 'complaint') {
        await suppress('complaint', `complained (${report.feedback_type}) about message ${record.id}`);
      } else {
        if (lateBounceType(report.action, report.status) === 'hard') {
          await suppress('hard_bounce', report.diagnostic ?? `bounced with ${report.status}`);
        }
        // A delay says the remote side is still trying: the message's status stays.
        if (report.action === 'failed') outcomes.status = 'bounced';
      }
      appendEvent(turn, outcomes, event.type, event.data);
      turn.set('outcomes', outcomes);
      return { result: 'recorded', recipient };
    },
  },

  async onReminder(turn, name) {
    if (name === 'send') {
      // No record: the turn that set this reminder never saved (possible on Dapr, which registers
      // reminders before the state they belong to). Nothing to send.
      const record = await readRecord(turn);
      if (!record || record.status !== 'scheduled') return;
      queue(turn, record);
      turn.set('record', record);
    } else if (name === 'watch') {
      const record = await readRecord(turn);
      if (!record) return;
      if (record.status === 'held') {
        const hold = record.hold!;
        return settle(turn, record, await actor(turn, batchActor, hold.batch_id).resolve({ attempt: hold.attempt }));
      }
      const retainedUntil = expiresAt(record);
      // Queued, with no delivery outcome since: the hand-over is still owed.
      const { status } = messageView(record, await turn.get<MessageOutcomes>('outcomes'));
      if (status === 'queued') {
        handOver(turn, record);
      } else if (Date.now() < retainedUntil) {
        turn.setReminder('watch', retainedUntil);
      } else {
        forget(turn);
        turn.publish(MESSAGE_EXPIRED, { message_id: turn.actorId });
      }
    }
  },
});

/**
 * The actor, asking only the recipients the index lists (recipientActorWith keeps it), counting
 * unlimited sends in the tally, and capturing sandbox messages with `capture`.
 */
export function messageActorWith(deps: AdmissionDeps & { capture?: SandboxCapture }): typeof messageActor {
  return {
    ...messageActor,
    methods: { ...messageActor.methods, admit: admitWith(deps), captureSandbox: captureWith(deps.capture ?? NO_INBOX) },
  };
}
