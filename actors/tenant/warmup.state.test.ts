import { describe, expect, it } from 'vitest';
import {
  domainWarmupView,
  capsOf,
  initialWarmup,
  returnWarmup,
  rollWarmup,
  skippedWarmup,
  takeWarmup,
  warmupView,
  type WarmupSettings,
  type WarmupState,
} from './warmup.state.ts';

const H = 3_600_000;
const D = 24 * H;
const settings: WarmupSettings = {
  enabled: true,
  startPerDay: 50,
  growth: 1.4,
  fullPerDay: 100_000,
  dayMs: D,
  windowMs: H,
  broadcastShare: 0.8,
  providerShare: 1,
  idleMs: 30 * D,
};
const T0 = Date.UTC(2026, 10, 1);

/** Takes `n` sends of `stream` at `now`: how many went, and the state after. */
function takeMany(state: WarmupState, n: number, stream: 'transactional' | 'broadcast', now: number, s = settings) {
  let went = 0;
  let at: number | null = null;
  for (let i = 0; i < n; i++) {
    const answer = takeWarmup(state, stream, now, false, s);
    state = answer.state;
    if (answer.go) went += 1;
    else at = answer.at;
  }
  return { went, at, state };
}

describe('warmup ramp', () => {
  it('starts at 50 a day and grows ×1.4 a day to the ramp end; an hour takes its share of the day', () => {
    expect(capsOf(1, settings)).toEqual({ daily: 50, window: 3 });
    expect(capsOf(2, settings)).toEqual({ daily: 70, window: 3 });
    expect(capsOf(3, settings)).toEqual({ daily: 98, window: 5 });
    expect(capsOf(10, settings).daily).toBe(Math.round(50 * 1.4 ** 9));
    expect(capsOf(60, settings).daily).toBe(100_000);
  });

  it('holds the window cap and defers the rest to the next window start, never past the day', () => {
    const { went, at, state } = takeMany(initialWarmup(T0), 5, 'transactional', T0 + 10);
    expect(went).toBe(3);
    expect(at).toBe(T0 + H);
    // The next window takes three more.
    expect(takeMany(state, 5, 'transactional', T0 + H).went).toBe(3);
  });

  it('holds the day cap: past it, mail waits for the next day', () => {
    const s = { ...settings, windowMs: D };
    const { went, at, state } = takeMany(initialWarmup(T0), 60, 'transactional', T0 + 5, s);
    expect(went).toBe(50);
    expect(at).toBe(T0 + D);
    const day2 = takeMany(state, 80, 'transactional', T0 + D, s);
    expect(day2.went).toBe(70);
    expect(day2.state.day).toBe(2);
  });

  it('keeps a share of each cap for transactional mail: broadcasts stop below it', () => {
    const s = { ...settings, windowMs: D };
    const broadcasts = takeMany(initialWarmup(T0), 60, 'broadcast', T0, s);
    expect(broadcasts.went).toBe(40);
    expect(broadcasts.at).toBe(T0 + D);
    expect(takeMany(broadcasts.state, 20, 'transactional', T0, s).went).toBe(10);
  });

  it('stands still while frozen: a new day resets the counts but not the day', () => {
    const state = initialWarmup(T0);
    expect(rollWarmup(state, T0 + 2 * D + 5, true, settings)).toMatchObject({ day: 1, day_start: T0 + 2 * D, used_day: 0 });
    expect(rollWarmup(state, T0 + 2 * D + 5, false, settings)).toMatchObject({ day: 3, day_start: T0 + 2 * D });
  });

  it('is warm at the ramp end; a domain idle for the idle spell starts again at day 1', () => {
    const s = { ...settings, fullPerDay: 98 };
    const warm = rollWarmup(initialWarmup(T0), T0 + 2 * D, false, s);
    expect(warm.status).toBe('warm');
    const sent = takeWarmup(warm, 'broadcast', T0 + 2 * D, false, s);
    expect(sent.go).toBe(true);
    const back = rollWarmup(sent.state, T0 + 2 * D + 30 * D, false, s);
    expect(back).toMatchObject({ status: 'warming', day: 1, used_day: 0, day_start: T0 + 32 * D });
  });

  it("the operator's skip makes a domain warm at once", () => {
    const skipped = skippedWarmup(initialWarmup(T0), T0 + 5);
    expect(takeMany(skipped, 500, 'broadcast', T0 + 10).went).toBe(500);
    expect(warmupView(skipped, T0 + 10, false, settings).status).toBe('warm');
  });

  it('shows the day, the caps, what is used and when the next window starts; off when disabled', () => {
    const { state } = takeMany(initialWarmup(T0), 2, 'transactional', T0 + 10);
    expect(warmupView(state, T0 + 20, true, settings)).toEqual({
      status: 'warming',
      day: 1,
      daily_cap: 50,
      window_cap: 3,
      used_today: 2,
      used_this_window: 2,
      next_window: new Date(T0 + H).toISOString(),
      frozen: true,
    });
    expect(warmupView(state, T0 + 20, false, { ...settings, enabled: false }).status).toBe('off');
  });
});

describe('returnWarmup', () => {
  it('gives a count back to the day and window it was taken in, and to none that has rolled since', () => {
    const taken = takeWarmup(initialWarmup(T0), 'transactional', T0, false, settings);
    if (!taken.go) throw new Error('day 1 has room');
    const back = returnWarmup(taken.state, taken.state);
    expect(back).toMatchObject({ used_day: 0, used_window: 0 });
    // The window rolled: the day's count comes back, the new window's stays.
    const later = takeWarmup(taken.state, 'transactional', T0 + H, false, settings);
    if (!later.go) throw new Error('the next window has room');
    expect(returnWarmup(later.state, taken.state)).toMatchObject({ used_day: 1, used_window: 1 });
    // The day rolled: nothing comes back.
    const tomorrow = rollWarmup(later.state, T0 + D, false, settings);
    expect(returnWarmup(tomorrow, taken.state)).toEqual(tomorrow);
  });
});

describe('a share per destination provider', () => {
  it("keeps one provider to its share of the day's and the window's caps, while another still has room", () => {
    // Day 1: 50 a day, windows of a day; each provider half of it.
    const s = { ...settings, windowMs: D, providerShare: 0.5 };
    let state = initialWarmup(T0);
    for (let i = 0; i < 25; i++) {
      const a = takeWarmup(state, 'transactional', T0, false, s, 'google');
      if (!a.go) throw new Error(`google's ${i + 1}th should go`);
      state = a.state;
    }
    const over = takeWarmup(state, 'transactional', T0, false, s, 'google');
    expect(over).toMatchObject({ go: false, at: T0 + D });
    expect(takeWarmup(state, 'transactional', T0, false, s, 'microsoft').go).toBe(true);
    // Not known: only the domain's caps hold.
    expect(takeWarmup(state, 'transactional', T0, false, s, null).go).toBe(true);
    // The next day, google's count starts again.
    expect(takeWarmup(state, 'transactional', T0 + D, false, s, 'google').go).toBe(true);
  });

  it("shows each provider's use of its share today, by name, and none once the day has rolled", () => {
    const s = { ...settings, windowMs: D, providerShare: 0.5 };
    let state = initialWarmup(T0);
    for (const provider of ['microsoft', 'google', 'google', null]) {
      const a = takeWarmup(state, 'transactional', T0, false, s, provider);
      if (!a.go) throw new Error('day 1 has room');
      state = a.state;
    }
    expect(domainWarmupView(state, T0 + 1, false, s)).toMatchObject({
      used_today: 4,
      providers: [
        { provider: 'google', daily_cap: 25, window_cap: 25, used_today: 2, used_this_window: 2 },
        { provider: 'microsoft', daily_cap: 25, window_cap: 25, used_today: 1, used_this_window: 1 },
      ],
    });
    expect(domainWarmupView(state, T0 + D, false, s).providers).toEqual([]);
    // With no share (100 %), none is listed.
    expect(domainWarmupView(state, T0 + 1, false, { ...s, providerShare: 1 }).providers).toEqual([]);
  });
});
