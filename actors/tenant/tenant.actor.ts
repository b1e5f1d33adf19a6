// TenantActor, one per tenant: the send quota (a rate per second and a count per UTC day), and
// the chain of the tenant's delivery receipts. A message actor takes one send from the quota
// inside the turn that admits the message, after every other check, so only a message that is
// made counts. Each accepted delivery's receipt takes its place in the chain here, one at a time
// (mta/receipt.ts, docs/receipts.md); `issueReceipt` below signs it. And the tenant's reputation
// breaker (reputation.state.ts): fed the outcomes of its deliveries, it says whether each one
// may go now, and publishes each of its transitions as a `tenant.reputation_changed` event.
import { actor, defineActor, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { isoTime } from '../../lib/now.ts';
import { newId } from '../../lib/ids.ts';
import { EMAIL_EVENTS, type EmailEvent } from '../../events/email.event.ts';
import type { Quota } from '../../store/catalog.port.ts';
import {
  admit,
  enter,
  initialReputation,
  observe,
  viewOf,
  windowOf,
  type BreakerSettings,
  type ReputationChange,
  type ReputationSignal,
  type ReputationState,
  type ReputationView,
  type Transition,
} from './reputation.state.ts';
import { chainedPayload, newReceiptId, payloadHash, signReceipt, type ReceiptDraft, type SigningKey } from '../../mta/receipt.ts';

export const TENANT_ACTOR = 'TenantActor';

interface QuotaState {
  /** UTC day, YYYY-MM-DD, that `day_count` counts. */
  day: string;
  day_count: number;
  /** Unix second that `second_count` counts. */
  second: number;
  second_count: number;
}

const SECONDS_PER_DAY = 86_400;

/** The head of the tenant's receipt chain. */
interface ReceiptChain {
  /** The last receipt's seq; 0 before the first. */
  seq: number;
  /** Its payload hash (the next receipt's `prev`); null before the first. */
  last_hash: string | null;
}

/** A receipt as the chain issued it: the payload its JWS signs. */
export interface ChainedReceipt {
  id: string;
  seq: number;
  payload: string;
}

/**
 * How many of its latest receipts a tenant's actor keeps, so that a call repeated for the same
 * message, attempt and envelope recipients gets the receipt it was given, not a second link. A repeat comes from a
 * runtime retrying the call, within moments; older receipts are dropped as new ones come.
 */
export const RECENT_RECEIPTS = 1024;

/** An attempt makes one transaction per recipient domain, each with its receipt: the envelope's recipients tell them apart. */
const receiptKey = (d: ReceiptDraft) => `receipt:${d.message_id}:${d.attempt}:${d.envelope.to}`;
const recentKey = (seq: number) => `receipt-recent:${seq % RECENT_RECEIPTS}`;

/** The UTC day and the Unix second that counts taken now fall in. */
function now(): Pick<QuotaState, 'day' | 'second'> {
  const ms = Date.now();
  return { day: isoTime(ms).slice(0, 10), second: Math.floor(ms / 1000) };
}

/** The counts as they stand now: a new day or second starts at zero. */
async function current(turn: ActorTurn): Promise<QuotaState> {
  const { day, second } = now();
  const prev = await turn.get<QuotaState>('quota');
  return {
    day,
    day_count: prev?.day === day ? prev.day_count : 0,
    second,
    second_count: prev?.second === second ? prev.second_count : 0,
  };
}

const REPUTATION = 'reputation';
/** The reminder that moves an open breaker to half-open when its cool-down ends. */
const HALF_OPEN = 'reputation-half-open';

const reputationOf = async (turn: ActorTurn) => (await turn.get<ReputationState>(REPUTATION)) ?? initialReputation(isoTime());

/** Saves the breaker; a transition is published as an event on the tenant's webhooks, and an opening sets its cool-down's reminder. */
function saveReputation(turn: ActorTurn, state: ReputationState, moved: Transition | null): void {
  turn.set(REPUTATION, state);
  if (!moved) return;
  if (state.status === 'open' && state.half_open_at !== null) turn.setReminder(HALF_OPEN, state.half_open_at);
  else turn.deleteReminder(HALF_OPEN);
  const data: ReputationChange = { tenant_id: turn.actorId, ...moved, window: windowOf(state.buckets) };
  const event = { id: newId('evt'), type: 'tenant.reputation_changed' as const, created_at: state.since, data: { ...data } };
  turn.publish(EMAIL_EVENTS, { tenant_id: turn.actorId, event } satisfies EmailEvent);
}

export const tenantActor = defineActor({
  type: TENANT_ACTOR,
  methods: {
    /**
     * Takes one send from the quota, or refuses it. The day's count is checked first, so a send
     * refused for both is told quota_exceeded (its Retry-After is the longer).
     */
    async take(turn, args: { quota: Quota }): Promise<void> {
      const s = await current(turn);
      const { per_second, per_day } = args.quota;
      if (per_day !== null && s.day_count >= per_day) {
        throw new GatepostError('quota_exceeded', `The daily quota of ${per_day} sends is used up; it resets at 00:00 UTC.`, {
          retryAfter: SECONDS_PER_DAY - (s.second % SECONDS_PER_DAY),
        });
      }
      if (per_second !== null && s.second_count >= per_second) {
        throw new GatepostError('rate_limited', `At most ${per_second} sends per second are allowed.`, { retryAfter: 1 });
      }
      s.day_count += 1;
      s.second_count += 1;
      turn.set('quota', s);
    },

    /**
     * Puts an accepted delivery's receipt next in the tenant's chain: a new `rcp_` id, the next
     * seq, the hash of the payload before and the time; answers the payload to sign. The same
     * message, attempt and envelope recipients again answers the same receipt.
     */
    async chainReceipt(turn, draft: ReceiptDraft): Promise<ChainedReceipt> {
      const key = receiptKey(draft);
      const issued = await turn.get<ChainedReceipt>(key);
      if (issued) return issued;
      const chain = (await turn.get<ReceiptChain>('receipts')) ?? { seq: 0, last_hash: null };
      const seq = chain.seq + 1;
      const id = newReceiptId();
      const payload = chainedPayload(draft, { id, tenant_id: turn.actorId, seq, prev: chain.last_hash, issued_at: isoTime() });
      const receipt: ChainedReceipt = { id, seq, payload };
      // The receipt RECENT_RECEIPTS before this one leaves the kept ones as this one comes.
      const dropped = await turn.get<string>(recentKey(seq));
      if (dropped !== undefined) turn.delete(dropped);
      turn.set(recentKey(seq), key);
      turn.set(key, receipt);
      turn.set('receipts', { seq, last_hash: payloadHash(payload) } satisfies ReceiptChain);
      return receipt;
    },

    /** One more outcome of the tenant's mail for its breaker (an event delivered twice counts twice: rates move by one in a sample). */
    async observeReputation(turn, args: { signal: ReputationSignal; settings: BreakerSettings }): Promise<void> {
      const { state, transition } = observe(await reputationOf(turn), args.signal, Date.now(), args.settings);
      saveReputation(turn, state, transition);
    },

    /**
     * Whether a delivery of the tenant's may go now (reputation.state.ts's `admit`): `at` is when
     * to ask again, with the same `slot` so a held transactional message takes the slot it was given.
     */
    async admitDelivery(
      turn,
      args: { stream: 'transactional' | 'broadcast'; slot?: number; settings: BreakerSettings },
    ): Promise<{ go: true } | { go: false; at: number }> {
      const before = await turn.get<ReputationState>(REPUTATION);
      if (!before) return { go: true };
      const answer = admit(before, args, Date.now(), args.settings);
      if (answer.state !== before) turn.set(REPUTATION, answer.state);
      return answer.go ? { go: true } : { go: false, at: answer.at };
    },

    async reputation(turn): Promise<ReputationView> {
      return viewOf(await reputationOf(turn), Date.now());
    },

    /** The operator's reset: closed, with an empty window. */
    async resetReputation(turn): Promise<ReputationView> {
      const before = await reputationOf(turn);
      const reason = 'reset by the operator';
      const state: ReputationState = { ...initialReputation(isoTime()), reason, window_ms: before.window_ms };
      saveReputation(turn, state, before.status === 'closed' ? null : { from: before.status, to: 'closed', reason });
      return viewOf(state, Date.now());
    },
  },

  async onReminder(turn, name) {
    if (name !== HALF_OPEN) return;
    const before = await reputationOf(turn);
    if (before.status !== 'open') return;
    const reason = 'the cool-down ended: mail goes again, and the next sample decides';
    const state = enter(before, 'half_open', reason, Date.now(), 0);
    saveReputation(turn, state, { from: 'open', to: 'half_open', reason });
  },
});

/** Where the key receipts are signed with comes from (mta/receipt.keys.ts's ReceiptKeys). */
export interface ReceiptSigner {
  current(): Promise<SigningKey>;
}

/**
 * Issues the receipt of an accepted delivery: chained by the tenant's actor, then signed. The key
 * is read first, so a host that cannot sign makes no link. Answers `{ id, jws, seq }`: the JWS
 * goes on the timeline outcome and on `email.sent`.
 */
export async function issueReceipt(
  invoker: Invoker,
  keys: ReceiptSigner,
  tenantId: string,
  draft: ReceiptDraft,
): Promise<{ id: string; jws: string; seq: number }> {
  const key = await keys.current();
  const { id, seq, payload } = await actor(invoker, tenantActor, tenantId).chainReceipt(draft);
  return { id, seq, jws: signReceipt(payload, key) };
}
