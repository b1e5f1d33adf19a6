// DeliveryActor, one per live message: the attempts to hand the message over, through the relay
// (GATEPOST_SMTP_RELAY) or straight to the recipient domain's MX hosts. Each attempt is a row on
// the message's timeline: sent, bounced (hard: the recipient is suppressed; block: a 5.7.x
// policy refusal, nobody is; soft: retries or the horizon ran out) or deferred on a reminder.
// A sandbox message needs no actor of its own: `captureSandbox` puts it in the inbox.
import { actor, defineActor, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { isoTime } from '../../lib/now.ts';
import type { RenderedContent } from '../../mail/content.ts';
import { domainOf, parseMailbox } from '../../mail/address.ts';
import { signDkim, type DkimSigner } from '../../mail/dkim.ts';
import { composeRaw, envelopeRecipients } from '../../mail/mime.ts';
import { unanswered, type DeliveryReport, type Transport } from '../../mta/transport.ts';
import { classify } from './delivery.outcome.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import { MESSAGE_READY, messageActor } from '../message/message.actor.ts';
import type { AttemptOutcome, MessageReady, MessageRecord } from '../message/message.state.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';

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
  /** An outcome the message actor has not been told yet (it could not be reached). */
  unrecorded?: Unrecorded;
}

interface Unrecorded {
  outcome: AttemptOutcome;
  tenant_id: string;
  to: string;
}

const RECORD_RETRY_MS = 5_000;

/** Puts the outcome on the message's timeline, and suppresses the recipient of a hard bounce. */
async function recordOutcome(turn: ActorTurn, { outcome, tenant_id, to }: Unrecorded): Promise<void> {
  await actor(turn, messageActor, turn.actorId).recordAttempt(outcome);
  // Only a hard bounce says the address is bad: a block (5.7.x) is about the sender or its content.
  if (outcome.result === 'bounced' && outcome.bounce_type === 'hard') {
    await actor(turn, recipientActor, recipientActorId(tenant_id, to)).suppress({
      reason: 'hard_bounce',
      detail: outcome.response,
    });
  }
}

export interface DeliveryDeps {
  /** How live mail leaves: the relay when one is configured, direct MX delivery otherwise. */
  transport: Transport;
  catalog: Catalog;
  /** Waits between attempts, in ms; when they run out the message soft-bounces. */
  retrySchedule: number[];
  /** How long after it is due a message may still be retried, ms; past it, it soft-bounces. */
  horizonMs: number;
  /** The DKIM keys of a tenant's verified domain (tenancy/domains.ts); null: not one, the message goes unsigned. */
  signers: { signerFor(tenantId: string, fromDomain: string): Promise<DkimSigner | null> };
}

export function deliveryActor(deps: DeliveryDeps) {
  /** One live attempt, step by step: the bytes, the envelope, the hand-over. */
  async function deliver(record: MessageRecord, content: RenderedContent): Promise<DeliveryReport> {
    const composed = await composeRaw(content, { messageId: record.message_id_header, date: new Date(record.created_at) });
    // Signed between the bytes and the hand-over, so both signatures cover exactly what is sent.
    const from = parseMailbox(content.from)?.address;
    const signer = from ? await deps.signers.signerFor(record.tenant_id, domainOf(from)) : null;
    let raw = composed;
    if (signer) {
      try {
        raw = (await signDkim(composed, signer)).raw;
      } catch (error) {
        // Mail from a verified domain never leaves unsigned (a sealed key that cannot be opened, say): it waits.
        return unanswered('transient', `DKIM signing failed: ${String(error)}`);
      }
    }
    const envelope = { from: returnPath(content), to: envelopeRecipients(content), raw };
    // A transport answers every failure as a report; one that throws all the same defers, never loses, the message.
    const report = await deps.transport
      .send(envelope)
      .catch((error: unknown) => unanswered('transient', `Delivery failed: ${String(error)}`));
    // The receipt of an accepted hand-over (mta/receipt.ts) is issued here, from the report and the bytes sent.
    return report;
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
        if (s.done) return { attempt: false, interrupted: false };
        const interrupted = s.in_flight;
        const number = Math.max(s.begun ?? 0, s.attempts) + 1;
        turn.set('delivery', { ...s, begun: number, in_flight: true } satisfies DeliveryState);
        return { attempt: true, interrupted, number };
      },

      /** `number`: the attempt's number from `begin` (a sandbox capture has none: it takes the next). */
      async attempt(turn, args: { interrupted: boolean; number?: number }): Promise<AttemptOutcome['result'] | 'skipped'> {
        const s = (await turn.get<DeliveryState>('delivery')) ?? { attempts: 0, done: false, in_flight: false };
        if (s.done) return 'skipped';
        const message = actor(turn, messageActor, turn.actorId);
        const view = await message.get(undefined).catch(orNullIfGone);
        // Gone (its retention ended while a retry waited): nothing is left to deliver.
        if (!view) {
          turn.set('delivery', { ...s, done: true, in_flight: false } satisfies DeliveryState);
          return 'skipped';
        }
        const { record, content } = view;
        const attempt = args.number ?? s.attempts + 1;
        const to = record.to;
        let outcome: AttemptOutcome;

        if (record.sandbox) {
          await putInInbox(deps.catalog, { ...record, content });
          outcome = captured(attempt);
        } else {
          // Whether the message may go now (fair queue, warmup, breaker: issue 22) is decided here, before it is built.
          const report = await deliver(record, content);
          const due = Date.parse(record.send_at ?? record.created_at);
          outcome = classify(report, attempt, { schedule: deps.retrySchedule, horizon: due + deps.horizonMs }, Date.now());
        }
        if (args.interrupted) outcome.response = `${outcome.response} (an earlier attempt was cut short by a restart)`;

        const done = outcome.result !== 'deferred';
        if (outcome.retry_at) turn.setReminder('retry', Date.parse(outcome.retry_at));
        // The attempt is done whatever happens next: should telling the message actor fail, the
        // outcome waits in our state for the 'record' reminder, and a repeated call of this
        // method (a runtime retrying it) finds the delivery done instead of sending again.
        const unrecorded = { outcome, tenant_id: record.tenant_id, to };
        try {
          await recordOutcome(turn, unrecorded);
          turn.set('delivery', { attempts: attempt, done, in_flight: false } satisfies DeliveryState);
        } catch {
          turn.set('delivery', { attempts: attempt, done, in_flight: false, unrecorded } satisfies DeliveryState);
          turn.setReminder('record', Date.now() + RECORD_RETRY_MS);
        }
        return outcome.result;
      },

      /** The message's retention ended: nothing is left to deliver or to deduplicate. */
      async forget(turn): Promise<void> {
        turn.delete('delivery');
        turn.deleteReminder('retry');
      },
    },

    async onReminder(turn, name) {
      if (name === 'record') {
        const s = await turn.get<DeliveryState>('delivery');
        if (!s?.unrecorded) return;
        await recordOutcome(turn, s.unrecorded); // throws: the reminder is tried again
        turn.set('delivery', { attempts: s.attempts, done: s.done, in_flight: s.in_flight } satisfies DeliveryState);
        return;
      }
      // A retry goes back through the outbox, the same path as the first attempt.
      // Only live deliveries are retried.
      if (name === 'retry') turn.publish(MESSAGE_READY, { message_id: turn.actorId, sandbox: false } satisfies MessageReady);
    },
  });
}

/**
 * A sandbox message's hand-over: captured in the inbox, never delivered, and the capture put on
 * its timeline. No actor serialises it: both steps are idempotent (the inbox keeps one capture
 * a message, the timeline one outcome an attempt), so a hand-over repeated, even while the first
 * runs, captures once. A failure throws, and the hand-over is tried again.
 */
export async function captureSandbox(invoker: Invoker, catalog: Catalog, ready: MessageReady): Promise<'captured' | 'skipped'> {
  const message = actor(invoker, messageActor, ready.message_id);
  const view = await message.get(undefined).catch(orNullIfGone);
  // Gone (its retention ended while the hand-over waited): nothing left to capture.
  if (!view) return 'skipped';
  await putInInbox(catalog, { ...view.record, content: view.content });
  await message.recordAttempt(captured(1));
  return 'captured';
}

function orNullIfGone(error: unknown): null {
  if (error instanceof GatepostError && error.code === 'not_found') return null;
  throw error;
}

/** What a capture puts in the inbox: the message's ids and its rendered content. */
type InboxEntry = Pick<MessageRecord, 'id' | 'tenant_id' | 'message_id_header'> & { content: RenderedContent };

/** Puts a sandbox message in its tenant's capture inbox, rendered as it would have been sent. */
function putInInbox(catalog: Catalog, message: InboxEntry): Promise<void> {
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
  });
}

const captured = (attempt: number): AttemptOutcome => ({
  attempt,
  result: 'captured',
  smtp_code: null,
  enhanced_code: null,
  response: 'Captured in the sandbox inbox; not delivered.',
  mx: null,
  ip: null,
  tls: null,
  connected_at: null,
  accepted_at: null,
  retry_at: null,
});

/**
 * The envelope sender. A verified domain's messages will carry a VERP address on its bounce
 * subdomain (mta/verp.ts; the sending-domains work gives the domain); until then, and through a
 * relay, the From address.
 */
function returnPath(content: RenderedContent): string {
  return parseMailbox(content.from)?.address ?? content.from;
}
