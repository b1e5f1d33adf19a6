// The warmup of a sending domain (docs/deliverability.md): a new domain may send only so much a
// day and a window (an hour by default), the day's cap growing by a factor each day of the ramp
// (SendGrid-style: about 50 on day 1, ×1.4 a day) until it reaches the ramp's end, when the
// domain is warm. Mail over a cap is deferred to the next window, never refused. Transactional
// mail takes the cap before broadcasts: broadcasts may use only a share of each cap, the rest is
// kept for transactional mail. A domain idle long enough starts the ramp again. Plain functions
// over plain state: the TenantActor keeps one state per domain and checks it in admitDelivery.

/** The operator's settings (GATEPOST_WARMUP_*). */
export interface WarmupSettings {
  /** Whether new sending domains warm up at all. */
  enabled: boolean;
  /** Day 1's cap. */
  startPerDay: number;
  /** The factor each day's cap grows by over the day before's. */
  growth: number;
  /** A day's cap at which the ramp ends and the domain is warm. */
  fullPerDay: number;
  /** A ramp day's length (a real day but in tests). */
  dayMs: number;
  /** A window's length; its cap is the day's cap shared over the day's windows. */
  windowMs: number;
  /** The fraction of each cap broadcasts may use; the rest is kept for transactional mail. */
  broadcastShare: number;
  /** The fraction of each cap the mail to one destination provider may use (1: no cap of its own). */
  providerShare: number;
  /** A domain that sent nothing for this long starts the ramp again. */
  idleMs: number;
}

export interface WarmupState {
  /** warming: on the ramp; warm: at its end, or the operator skipped it. */
  status: 'warming' | 'warm';
  /** The ramp's day, from 1. */
  day: number;
  /** When the current day began (ms since epoch); windows are counted from it. */
  day_start: number;
  used_day: number;
  window_start: number;
  used_window: number;
  /** The last send the domain made (ms since epoch), for the idle rule. */
  last_sent_at: number | null;
  /** Today's and this window's counts per destination provider (mta/provider.ts); none before the first. */
  providers?: Record<string, { used_day: number; used_window: number }>;
}

/** What GET /v1/domains/:id shows of the ramp. */
export interface WarmupView {
  status: 'off' | 'warming' | 'warm';
  day: number | null;
  daily_cap: number | null;
  window_cap: number | null;
  used_today: number;
  used_this_window: number;
  /** When the next window starts (ISO); null when no cap applies. */
  next_window: string | null;
  /** Whether the ramp stands still: a breaker of the domain or its tenant is not closed. */
  frozen: boolean;
}

export function initialWarmup(now: number): WarmupState {
  return { status: 'warming', day: 1, day_start: now, used_day: 0, window_start: now, used_window: 0, last_sent_at: null };
}

/** The day's cap and the window's cap on day `day` of the ramp. */
export function capsOf(day: number, s: WarmupSettings): { daily: number; window: number } {
  const daily = Math.min(s.fullPerDay, Math.round(s.startPerDay * s.growth ** (day - 1)));
  const window = Math.max(1, Math.ceil((daily * Math.min(s.windowMs, s.dayMs)) / s.dayMs));
  return { daily, window };
}

/**
 * The state at `now`: idle too long, the ramp starts again; past the day's end, a new day (its
 * number unchanged while `frozen`); past the window's end, a new window. A day whose cap reaches
 * the ramp's end makes the domain warm.
 */
export function rollWarmup(state: WarmupState, now: number, frozen: boolean, s: WarmupSettings): WarmupState {
  if (state.last_sent_at !== null && now - state.last_sent_at >= s.idleMs) return initialWarmup(now);
  if (state.status === 'warm') return state;
  let next = state;
  const days = Math.floor((now - state.day_start) / s.dayMs);
  if (days > 0) {
    const day_start = state.day_start + days * s.dayMs;
    next = {
      ...next,
      day: frozen ? state.day : state.day + days,
      day_start,
      used_day: 0,
      window_start: day_start,
      used_window: 0,
      providers: {},
    };
  }
  const window_start = next.day_start + Math.floor((now - next.day_start) / s.windowMs) * s.windowMs;
  if (window_start !== next.window_start) {
    const providers = Object.fromEntries(
      Object.entries(next.providers ?? {}).map(([name, used]) => [name, { ...used, used_window: 0 }]),
    );
    next = { ...next, window_start, used_window: 0, providers };
  }
  if (capsOf(next.day, s).daily >= s.fullPerDay) next = { ...next, status: 'warm' };
  return next;
}

/** How many of a cap a stream may use: broadcasts their share (at least one), transactional mail all of it. */
const limitOf = (cap: number, stream: 'transactional' | 'broadcast', s: WarmupSettings) =>
  stream === 'transactional' ? cap : Math.max(1, Math.floor(cap * s.broadcastShare));

/** How many of a cap one destination provider's mail may use: its share (at least one). */
const providerLimitOf = (cap: number, s: WarmupSettings) => Math.max(1, Math.floor(cap * s.providerShare));

/**
 * Whether one more message of `stream` may go now, to `provider` (its destination's, or null when
 * not known). Yes takes one from the day's and the window's counts, and from the provider's; no
 * says when the next window starts, when it may ask again.
 */
export function takeWarmup(
  before: WarmupState,
  stream: 'transactional' | 'broadcast',
  now: number,
  frozen: boolean,
  s: WarmupSettings,
  provider: string | null = null,
): { go: true; state: WarmupState } | { go: false; at: number; state: WarmupState } {
  const state = rollWarmup(before, now, frozen, s);
  if (state.status === 'warm') return { go: true, state: { ...state, last_sent_at: now } };
  const caps = capsOf(state.day, s);
  // Over either cap, the next window: there the day may have rolled, or the operator skipped the warmup.
  const next = Math.min(state.window_start + s.windowMs, state.day_start + s.dayMs);
  if (state.used_day >= limitOf(caps.daily, stream, s) || state.used_window >= limitOf(caps.window, stream, s)) {
    return { go: false, at: next, state };
  }
  const used = provider === null ? null : (state.providers?.[provider] ?? { used_day: 0, used_window: 0 });
  if (used && (used.used_day >= providerLimitOf(caps.daily, s) || used.used_window >= providerLimitOf(caps.window, s))) {
    return { go: false, at: next, state };
  }
  const taken: WarmupState = { ...state, used_day: state.used_day + 1, used_window: state.used_window + 1, last_sent_at: now };
  if (provider !== null && used) {
    taken.providers = {
      ...state.providers,
      [provider]: { used_day: used.used_day + 1, used_window: used.used_window + 1 },
    };
  }
  return { go: true, state: taken };
}

/** One destination provider's use of a warming domain's caps, and its share of them. */
export interface ProviderUse {
  provider: string;
  daily_cap: number;
  window_cap: number;
  used_today: number;
  used_this_window: number;
}

/** What GET /v1/domains/:id shows of a domain's ramp: a source address's, and each provider's use. */
export type DomainWarmupView = WarmupView & { providers: ProviderUse[] };

/** The view of a domain no cap applies to: warmup off, or the domain warm. */
const uncapped = (status: 'off' | 'warm', frozen: boolean): WarmupView => ({
  status,
  day: null,
  daily_cap: null,
  window_cap: null,
  used_today: 0,
  used_this_window: 0,
  next_window: null,
  frozen,
});

export function warmupView(state: WarmupState | undefined, now: number, frozen: boolean, s: WarmupSettings): WarmupView {
  return viewOf(state, now, frozen, s).view;
}

/** The view, and the state rolled to `now` it shows (null when no cap applies). */
function viewOf(
  state: WarmupState | undefined,
  now: number,
  frozen: boolean,
  s: WarmupSettings,
): { view: WarmupView; rolled: WarmupState | null } {
  if (!s.enabled) return { view: uncapped('off', frozen), rolled: null };
  const w = rollWarmup(state ?? initialWarmup(now), now, frozen, s);
  if (w.status === 'warm') return { view: uncapped('warm', frozen), rolled: null };
  const caps = capsOf(w.day, s);
  const view: WarmupView = {
    status: 'warming',
    day: w.day,
    daily_cap: caps.daily,
    window_cap: caps.window,
    used_today: w.used_day,
    used_this_window: w.used_window,
    next_window: new Date(Math.min(w.window_start + s.windowMs, w.day_start + s.dayMs)).toISOString(),
    frozen,
  };
  return { view, rolled: w };
}

/**
 * A domain's warmup: its ramp, and the providers its mail went to today with their share of the
 * caps (none while no share applies: warmup off, the domain warm, or a share of 100 %).
 */
export function domainWarmupView(
  state: WarmupState | undefined,
  now: number,
  frozen: boolean,
  s: WarmupSettings,
): DomainWarmupView {
  const { view, rolled } = viewOf(state, now, frozen, s);
  if (!rolled || s.providerShare >= 1) return { ...view, providers: [] };
  const caps = capsOf(rolled.day, s);
  const [daily, window] = [providerLimitOf(caps.daily, s), providerLimitOf(caps.window, s)];
  const providers = Object.entries(rolled.providers ?? {})
    .filter(([, used]) => used.used_day > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([provider, used]) => ({
      provider,
      daily_cap: daily,
      window_cap: window,
      used_today: used.used_day,
      used_this_window: used.used_window,
    }));
  return { ...view, providers };
}

/** The operator's skip: the domain is warm (it starts again only after an idle spell). */
export const skippedWarmup = (state: WarmupState | undefined, now: number): WarmupState => ({
  ...(state ?? initialWarmup(now)),
  status: 'warm',
  last_sent_at: now,
});

/**
 * Gives back one taken at `taken` (the state's day and window then): an attempt that took a count
 * and was then held by something else (a source IP's count, given back when the tenant's breaker or
 * its domain's warmup holds the message). A day or window that has rolled since keeps its count.
 */
export function returnWarmup(state: WarmupState, taken: Pick<WarmupState, 'day_start' | 'window_start'>): WarmupState {
  if (state.status === 'warm' || state.day_start !== taken.day_start) return state;
  return {
    ...state,
    used_day: Math.max(0, state.used_day - 1),
    used_window: state.window_start === taken.window_start ? Math.max(0, state.used_window - 1) : state.used_window,
  };
}
