// The reputation breaker of a tenant (docs/deliverability.md): its rolling counts of delivery
// outcomes and complaints, the rates they make, and the state they move it through: closed →
// warning → open → half-open (after a cool-down) → closed on a clean sample. Plain functions over
// plain state: the TenantActor keeps the state durable and publishes each transition.

import type { BreakerStatus } from '../../store/catalog.port.ts';

export type { BreakerStatus };

/** What a lifecycle event tells the breaker: an accepted delivery, a hard bounce, a 5.7.x block, a complaint. */
export type ReputationSignal = 'sent' | 'hard' | 'block' | 'complaint';

/** The operator's settings (GATEPOST_BREAKER_*); rates are fractions (0.04 is 4 %). */
export interface BreakerSettings {
  /** The rolling window the rates are over. */
  windowMs: number;
  /** Deliveries (sent, hard bounces and blocks) a window needs before its rates count. */
  minSample: number;
  bounceWarn: number;
  bounceOpen: number;
  complaintWarn: number;
  complaintOpen: number;
  blockWarn: number;
  blockOpen: number;
  /** How long the breaker stays open before it lets mail through again, half-open. */
  cooldownMs: number;
  /** While open, transactional mail goes one message per this interval. */
  trickleMs: number;
}

interface Counts {
  sent: number;
  hard: number;
  block: number;
  complaint: number;
}

/** A tenth of the window's counts: the window rolls a bucket at a time. */
interface Bucket extends Counts {
  /** The bucket's start, ms since epoch. */
  at: number;
}

const BUCKETS_PER_WINDOW = 10;

export interface ReputationState {
  status: BreakerStatus;
  /** When the breaker came to this status (ISO). */
  since: string;
  /** Why it did. */
  reason: string | null;
  buckets: Bucket[];
  /** The window the buckets were last rolled over (the settings of the last observation). */
  window_ms: number;
  /** While open: when it goes half-open. */
  half_open_at: number | null;
  /** While open: the next transactional slot not yet given out. */
  trickle_next: number;
}

export interface ReputationWindow {
  /** Deliveries the rates are over: sent, hard-bounced and blocked. */
  sample: number;
  sent: number;
  hard_bounces: number;
  blocks: number;
  complaints: number;
  bounce_rate: number;
  complaint_rate: number;
  block_rate: number;
}

/** What GET /v1/reputation answers. */
export interface ReputationView {
  status: BreakerStatus;
  since: string;
  reason: string | null;
  window: ReputationWindow;
  half_open_at: string | null;
}

/** The data of a `tenant.reputation_changed` event. */
export interface ReputationChange {
  tenant_id: string;
  /** The sending domain whose breaker moved; null: the tenant's own. */
  domain: string | null;
  from: BreakerStatus;
  to: BreakerStatus;
  reason: string;
  window: ReputationWindow;
}

export function initialReputation(at: string): ReputationState {
  return { status: 'closed', since: at, reason: null, buckets: [], window_ms: 0, half_open_at: null, trickle_next: 0 };
}

/** Drops the buckets that have left the window ending at `now`. */
function roll(state: ReputationState, now: number): Bucket[] {
  return state.buckets.filter((b) => b.at > now - state.window_ms);
}

export function windowOf(buckets: Bucket[]): ReputationWindow {
  const c = buckets.reduce<Counts>(
    (sum, b) => ({
      sent: sum.sent + b.sent,
      hard: sum.hard + b.hard,
      block: sum.block + b.block,
      complaint: sum.complaint + b.complaint,
    }),
    { sent: 0, hard: 0, block: 0, complaint: 0 },
  );
  const sample = c.sent + c.hard + c.block;
  const rate = (n: number) => (sample === 0 ? 0 : n / sample);
  return {
    sample,
    sent: c.sent,
    hard_bounces: c.hard,
    blocks: c.block,
    complaints: c.complaint,
    bounce_rate: rate(c.hard),
    complaint_rate: rate(c.complaint),
    block_rate: rate(c.block),
  };
}

const percent = (r: number) => `${Number((r * 100).toFixed(3))} %`;

/** What a window says: too small to tell, clean, over a warning threshold, or over an open one (with why). */
export function judge(
  w: ReputationWindow,
  s: BreakerSettings,
): { verdict: 'unknown' | 'clean' | 'warning' | 'open'; why: string } {
  if (w.sample < s.minSample) return { verdict: 'unknown', why: `${w.sample} of the ${s.minSample} deliveries a sample needs` };
  const rates = [
    { name: 'hard bounce rate', rate: w.bounce_rate, warn: s.bounceWarn, open: s.bounceOpen },
    { name: 'complaint rate', rate: w.complaint_rate, warn: s.complaintWarn, open: s.complaintOpen },
    { name: 'block rate', rate: w.block_rate, warn: s.blockWarn, open: s.blockOpen },
  ];
  const over = (level: 'warn' | 'open') => rates.find((r) => r.rate >= r[level]);
  const open = over('open');
  if (open)
    return {
      verdict: 'open',
      why: `${open.name} ${percent(open.rate)} over ${w.sample} deliveries (opens at ${percent(open.open)})`,
    };
  const warn = over('warn');
  if (warn)
    return {
      verdict: 'warning',
      why: `${warn.name} ${percent(warn.rate)} over ${w.sample} deliveries (warns at ${percent(warn.warn)})`,
    };
  return { verdict: 'clean', why: `a clean sample of ${w.sample} deliveries` };
}

/** Where each status goes on each verdict; an open breaker waits for its cool-down, whatever the counts say. */
function next(status: BreakerStatus, verdict: ReturnType<typeof judge>['verdict']): BreakerStatus {
  if (status === 'open' || verdict === 'unknown') return status;
  return verdict === 'clean' ? 'closed' : verdict;
}

/** A move of the breaker, for the actor to publish. */
export interface Transition {
  from: BreakerStatus;
  to: BreakerStatus;
  reason: string;
}

/** The state after one more signal, and the transition it made, if any. */
export function observe(
  state: ReputationState,
  signal: ReputationSignal,
  now: number,
  s: BreakerSettings,
): { state: ReputationState; transition: Transition | null } {
  const width = Math.max(1, Math.floor(s.windowMs / BUCKETS_PER_WINDOW));
  const at = Math.floor(now / width) * width;
  const buckets = roll({ ...state, window_ms: s.windowMs }, now);
  let bucket = buckets.find((b) => b.at === at);
  if (!bucket) buckets.push((bucket = { at, sent: 0, hard: 0, block: 0, complaint: 0 }));
  bucket[signal] += 1;
  const updated: ReputationState = { ...state, buckets, window_ms: s.windowMs };
  const { verdict, why } = judge(windowOf(buckets), s);
  const to = next(state.status, verdict);
  if (to === state.status) return { state: updated, transition: null };
  return { state: enter(updated, to, why, now, s.cooldownMs), transition: { from: state.status, to, reason: why } };
}

/** The state as it enters `to`: opening sets the cool-down; going half-open starts a fresh sample. */
export function enter(
  state: ReputationState,
  to: BreakerStatus,
  reason: string,
  now: number,
  cooldownMs: number,
): ReputationState {
  const since = new Date(now).toISOString();
  if (to === 'open') return { ...state, status: to, since, reason, half_open_at: now + cooldownMs, trickle_next: now };
  return { ...state, status: to, since, reason, buckets: to === 'half_open' ? [] : state.buckets, half_open_at: null };
}

export function viewOf(state: ReputationState, now: number): ReputationView {
  return {
    status: state.status,
    since: state.since,
    reason: state.reason,
    window: windowOf(roll(state, now)),
    half_open_at: state.half_open_at === null ? null : new Date(state.half_open_at).toISOString(),
  };
}

/**
 * Whether a message of `stream` may go now: always, unless the breaker is open. Open, broadcasts
 * wait for the half-open moment and transactional mail goes one message per trickle interval,
 * each held message given a slot of its own (`slot`: the one it was given, which lets it go).
 */
export function admit(
  state: ReputationState,
  args: { stream: 'transactional' | 'broadcast'; slot?: number },
  now: number,
  s: BreakerSettings,
): { go: true; state: ReputationState } | { go: false; at: number; state: ReputationState } {
  if (state.status !== 'open') return { go: true, state };
  if (args.stream === 'broadcast') return { go: false, at: state.half_open_at ?? now + s.cooldownMs, state };
  // A message that asks again with its slot keeps it: asked early (a watchdog's hand-over), it is told the same time.
  if (args.slot !== undefined) return args.slot <= now ? { go: true, state } : { go: false, at: args.slot, state };
  const at = Math.max(now, state.trickle_next);
  const after = { ...state, trickle_next: at + s.trickleMs };
  return at <= now ? { go: true, state: after } : { go: false, at, state: after };
}
