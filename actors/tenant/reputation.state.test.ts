// The breaker's rules on their own: a sample too small decides nothing, each threshold moves it,
// an open breaker waits out its cool-down, half-open starts a fresh sample, and while open
// broadcasts wait and transactional mail gets a slot each, one trickle interval apart.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import {
  admit,
  enter,
  initialReputation,
  observe,
  viewOf,
  type ReputationSignal,
  type ReputationState,
} from './reputation.state.ts';

const settings = { ...loadConfig({}).breaker, minSample: 10, windowMs: 100_000, cooldownMs: 5_000, trickleMs: 1_000 };
const T = 1_000_000;

/** Feeds `signals` at time `at`; answers the state and every transition's target. */
function feed(state: ReputationState, signals: ReputationSignal[], at = T) {
  const moves: string[] = [];
  for (const signal of signals) {
    const r = observe(state, signal, at, settings);
    state = r.state;
    if (r.transition) moves.push(r.transition.to);
  }
  return { state, moves };
}

const n = (count: number, signal: ReputationSignal) => Array<ReputationSignal>(count).fill(signal);

describe('reputation breaker', () => {
  it('decides nothing below the minimum sample, then opens on a hard bounce rate over the open threshold', () => {
    const nine = feed(initialReputation('x'), n(9, 'hard'));
    expect(nine.moves).toEqual([]);
    const ten = feed(nine.state, ['hard']);
    expect(ten.moves).toEqual(['open']);
    expect(ten.state.half_open_at).toBe(T + 5_000);
    expect(ten.state.reason).toMatch(/hard bounce rate 100 % over 10 deliveries \(opens at 8 %\)/);
  });

  it('warns between the thresholds, and closes again when the rate falls under the warning one', () => {
    // 1 hard bounce in 20: 5 %, between 4 % (warn) and 8 % (open).
    const warned = feed(initialReputation('x'), [...n(19, 'sent'), 'hard']);
    expect(warned.moves).toEqual(['warning']);
    // 1 in 30: 3.3 %.
    expect(feed(warned.state, n(10, 'sent')).moves).toEqual(['closed']);
  });

  it('counts complaints and 5.7.x blocks against their own thresholds', () => {
    expect(feed(initialReputation('x'), [...n(99, 'sent'), 'block', 'complaint']).moves).toEqual(['open']);
    expect(feed(initialReputation('x'), [...n(1000, 'sent'), 'complaint']).moves).toEqual(['warning']);
    expect(feed(initialReputation('x'), [...n(49, 'sent'), 'block']).moves).toEqual(['warning']);
  });

  it('forgets what left the window', () => {
    const bad = feed(initialReputation('x'), n(5, 'hard'), T).state;
    // The five bounces are a window old: ten clean deliveries now make a clean sample.
    const later = feed(bad, n(10, 'sent'), T + settings.windowMs + 1);
    expect(later.moves).toEqual([]);
    expect(viewOf(later.state, T + settings.windowMs + 1).window).toMatchObject({ sample: 10, hard_bounces: 0 });
  });

  it('stays open whatever the counts say until the cool-down; half-open starts a fresh sample that closes it when clean', () => {
    const open = feed(initialReputation('x'), n(10, 'hard')).state;
    expect(feed(open, n(100, 'sent')).state.status).toBe('open');
    const half = enter(open, 'half_open', 'cool-down', T + 5_000, 0);
    expect(viewOf(half, T + 5_000).window.sample).toBe(0);
    expect(feed(half, n(9, 'sent'), T + 5_000).moves).toEqual([]);
    expect(feed(half, n(10, 'sent'), T + 5_000).moves).toEqual(['closed']);
    expect(feed(half, [...n(9, 'sent'), 'hard'], T + 5_000).moves).toEqual(['open']);
  });

  it('open: broadcasts wait for the half-open moment; transactional mail goes one slot per trickle interval', () => {
    let state = feed(initialReputation('x'), n(10, 'hard')).state;
    expect(admit(state, { stream: 'broadcast' }, T, settings)).toMatchObject({ go: false, at: T + 5_000 });
    const first = admit(state, { stream: 'transactional' }, T, settings);
    expect(first.go).toBe(true);
    state = first.state;
    const slots: number[] = [];
    for (let i = 0; i < 3; i++) {
      const held = admit(state, { stream: 'transactional' }, T, settings);
      if (held.go) throw new Error('a second message in the same interval went');
      slots.push(held.at);
      state = held.state;
    }
    expect(slots).toEqual([T + 1_000, T + 2_000, T + 3_000]);
    // Each goes at its slot, and only from then.
    expect(admit(state, { stream: 'transactional', slot: slots[1] }, T + 2_000, settings).go).toBe(true);
    // Asking early, it is told its own slot again, and takes no new one.
    const early = admit(state, { stream: 'transactional', slot: slots[1] }, T + 1_999, settings);
    expect(early).toMatchObject({ go: false, at: slots[1], state: { trickle_next: T + 4_000 } });
    expect(admit({ ...state, status: 'half_open' }, { stream: 'broadcast' }, T, settings).go).toBe(true);
  });
});
