// TenantActor, one per tenant: the send quota (a rate per second and a count per UTC day), and
// the chain of the tenant's delivery receipts. A message actor takes one send from the quota
// inside the turn that admits the message, after every other check, so only a message that is
// made counts; a tenant without limits has its sends tallied instead (quota.tally.ts). Each
// accepted delivery's receipt takes its place in the chain here, one at a time (mta/receipt.ts,
// docs/receipts.md); `issueReceipt` below signs it. And the tenant's reputation
// breakers (reputation.state.ts), one for the tenant and one per sending domain: fed the outcomes
// of its deliveries, they say whether each one may go now, and publish each of their transitions
// as a `tenant.reputation_changed` event. And each sending domain's warmup (warmup.state.ts): the
// caps a new domain's mail is held to, checked with the breakers before each delivery.
import { actor, defineActor, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { isoTime, utcDay } from '../../lib/now.ts';
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
import {
  initialWarmup,
  skippedWarmup,
  takeWarmup,
  domainWarmupView,
  type DomainWarmupView,
  type WarmupSettings,
  type WarmupState,
} from './warmup.state.ts';
import { chainedPayload, newReceiptId, payloadHash, signReceipt, type ReceiptDraft, type SigningKey } from '../../mta/receipt.ts';

export const TENANT_ACTOR = 'TenantActor';

/** What GET /v1/reputation answers: the tenant's breaker, and each of its sending domains'. */
export type TenantReputation = ReputationView & { domains: Array<ReputationView & { domain: string }> };

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
  return { day: utcDay(ms), second: Math.floor(ms / 1000) };
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

// A breaker per tenant, and one per sending domain of the tenant (`domain` its name): the keys of each.
const reputationKey = (domain: string | null) => (domain === null ? 'reputation' : `reputation@${domain}`);
/** The reminder that moves an open breaker to half-open when its cool-down ends. */
const HALF_OPEN = 'reputation-half-open';
const halfOpenReminder = (domain: string | null) => (domain === null ? HALF_OPEN : `${HALF_OPEN}@${domain}`);
/** The names of the domains that have a breaker, for GET /v1/reputation. */
const REPUTATION_DOMAINS = 'reputation-domains';
const warmupKey = (domain: string) => `warmup@${domain}`;

const reputationOf = async (turn: ActorTurn, domain: string | null) =>
  (await turn.get<ReputationState>(reputationKey(domain))) ?? initialReputation(isoTime());

/**
 * Saves a breaker; a transition is published as an event on the tenant's webhooks, and an
 * opening sets its cool-down's reminder.
 */
function saveReputation(turn: ActorTurn, domain: string | null, state: ReputationState, moved: Transition | null): void {
  turn.set(reputationKey(domain), state);
  if (!moved) return;
  if (state.status === 'open' && state.half_open_at !== null) turn.setReminder(halfOpenReminder(domain), state.half_open_at);
  else turn.deleteReminder(halfOpenReminder(domain));
  const data: ReputationChange = { tenant_id: turn.actorId, domain, ...moved, window: windowOf(state.buckets) };
  const event = { id: newId('evt'), type: 'tenant.reputation_changed' as const, created_at: state.since, data: { ...data } };
  turn.publish(EMAIL_EVENTS, { tenant_id: turn.actorId, event } satisfies EmailEvent);
}

/** The tenant's breaker and each of its sending domains'. */
async function reputations(turn: ActorTurn): Promise<TenantReputation> {
  const now = Date.now();
  const domains = (await turn.get<string[]>(REPUTATION_DOMAINS)) ?? [];
  // One read at a time, as every turn reads its state.
  const views = [];
  for (const domain of domains) views.push({ domain, ...viewOf(await reputationOf(turn, domain), now) });
  return { ...viewOf(await reputationOf(turn, null), now), domains: views };
}

/** Whether a domain's warmup ramp stands still: its breaker or its tenant's is not closed. */
async function frozen(turn: ActorTurn, domain: string): Promise<boolean> {
  for (const level of [null, domain]) {
    const r = await turn.get<ReputationState>(reputationKey(level));
    if (r !== undefined && r.status !== 'closed') return true;
  }
  return false;
}

/** Why a delivery may not go yet: a breaker (it keeps `at` as its slot) or the domain's warmup. */
export type DeliveryAdmission = { go: true } | { go: false; at: number; by: 'breaker' | 'warmup' };

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
     * Adds `sends` made on UTC day `day` without a limit to take them from (quota.tally.ts) to the
     * day's count, so that a daily limit set later counts them. Told about a day that has ended, it
     * counts nothing.
     */
    async tally(turn, { day, sends }: { day: string; sends: number }): Promise<void> {
      const s = await current(turn);
      if (s.day !== day) return;
      s.day_count += sends;
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

    /**
     * One more outcome of the tenant's mail for its breakers: the tenant's, and its sending
     * domain's when the mail had one (an event delivered twice counts twice: rates move by one in a sample).
     */
    async observeReputation(
      turn,
      args: { signal: ReputationSignal; domain?: string | null; settings: BreakerSettings },
    ): Promise<void> {
      const levels = args.domain ? [null, args.domain] : [null];
      for (const domain of levels) {
        const { state, transition } = observe(await reputationOf(turn, domain), args.signal, Date.now(), args.settings);
        saveReputation(turn, domain, state, transition);
      }
      if (args.domain) {
        const known = (await turn.get<string[]>(REPUTATION_DOMAINS)) ?? [];
        if (!known.includes(args.domain)) turn.set(REPUTATION_DOMAINS, [...known, args.domain]);
      }
    },

    /**
     * Whether a delivery of the tenant's may go now: the tenant's breaker, then its sending
     * domain's (reputation.state.ts's `admit`: `at` is when to ask again, with the same `slot` so a
     * held transactional message takes the slot it was given), then the domain's warmup
     * (warmup.state.ts: `at` is the next window's start). `domain`: the verified From domain, if any.
     */
    async admitDelivery(
      turn,
      args: {
        stream: 'transactional' | 'broadcast';
        slot?: number;
        domain?: string | null;
        /** The destination's mailbox provider (mta/provider.ts), whose share of the domain's warmup caps it takes; null: not known. */
        provider?: string | null;
        settings: BreakerSettings;
        warmup: WarmupSettings;
      },
    ): Promise<DeliveryAdmission> {
      const now = Date.now();
      for (const domain of args.domain ? [null, args.domain] : [null]) {
        const before = await turn.get<ReputationState>(reputationKey(domain));
        if (!before) continue;
        const answer = admit(before, args, now, args.settings);
        if (answer.state !== before) turn.set(reputationKey(domain), answer.state);
        if (!answer.go) return { go: false, at: answer.at, by: 'breaker' };
      }
      if (!args.domain || !args.warmup.enabled) return { go: true };
      const key = warmupKey(args.domain);
      const before = (await turn.get<WarmupState>(key)) ?? initialWarmup(now);
      const answer = takeWarmup(before, args.stream, now, await frozen(turn, args.domain), args.warmup, args.provider ?? null);
      turn.set(key, answer.state);
      return answer.go ? { go: true } : { go: false, at: answer.at, by: 'warmup' };
    },

    /**
     * Whether broadcasts from `domain` (their From domain) must wait: the tenant's breaker or the
     * domain's is open. Answers the open one's reason and when it goes half-open; null: they may
     * go. Reads only: a broadcast asks before each page of its fan-out (actors/broadcast).
     */
    async broadcastHold(turn, { domain }: { domain: string }): Promise<{ reason: string; until: number } | null> {
      for (const level of [null, domain]) {
        const state = await turn.get<ReputationState>(reputationKey(level));
        if (state?.status !== 'open') continue;
        const breaker = level === null ? "the tenant's reputation breaker" : `the reputation breaker of ${level}`;
        return { reason: `${breaker} is open: ${state.reason ?? 'no reason given'}`, until: state.half_open_at ?? Date.now() };
      }
      return null;
    },

    /** The tenant's breaker, and each of its sending domains'. */
    reputation: (turn): Promise<TenantReputation> => reputations(turn),

    /** The operator's reset: every breaker of the tenant closed, with an empty window. */
    async resetReputation(turn): Promise<TenantReputation> {
      const reason = 'reset by the operator';
      for (const domain of [null, ...((await turn.get<string[]>(REPUTATION_DOMAINS)) ?? [])]) {
        const before = await reputationOf(turn, domain);
        const state: ReputationState = { ...initialReputation(isoTime()), reason, window_ms: before.window_ms };
        saveReputation(turn, domain, state, before.status === 'closed' ? null : { from: before.status, to: 'closed', reason });
      }
      return reputations(turn);
    },

    /** A sending domain's warmup as it stands. */
    async warmup(turn, args: { domain: string; settings: WarmupSettings }): Promise<DomainWarmupView> {
      const state = await turn.get<WarmupState>(warmupKey(args.domain));
      return domainWarmupView(state, Date.now(), await frozen(turn, args.domain), args.settings);
    },

    /** The operator's word on a domain's warmup: skip it (the domain is warm already), or restart the ramp at `day` (1: from the start). */
    async setWarmup(
      turn,
      args: { domain: string; change: { action: 'skip' } | { action: 'restart'; day: number }; settings: WarmupSettings },
    ): Promise<DomainWarmupView> {
      const now = Date.now();
      const key = warmupKey(args.domain);
      const { change } = args;
      const state =
        change.action === 'skip'
          ? skippedWarmup(await turn.get<WarmupState>(key), now)
          : { ...initialWarmup(now), day: change.day };
      turn.set(key, state);
      return domainWarmupView(state, now, await frozen(turn, args.domain), args.settings);
    },
  },

  async onReminder(turn, name) {
    if (name !== HALF_OPEN && !name.startsWith(`${HALF_OPEN}@`)) return;
    const domain = name === HALF_OPEN ? null : name.slice(HALF_OPEN.length + 1);
    const before = await reputationOf(turn, domain);
    if (before.status !== 'open') return;
    const reason = 'the cool-down ended: mail goes again, and the next sample decides';
    const state = enter(before, 'half_open', reason, Date.now(), 0);
    saveReputation(turn, domain, state, { from: 'open', to: 'half_open', reason });
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
