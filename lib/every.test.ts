// A job on a timer runs at once, never twice at the same time, and stops when told.
import { describe, expect, it, vi } from 'vitest';
import { every } from './every.ts';

describe('every', () => {
  it('runs again each tick, skipping ticks while a run is under way', async () => {
    vi.useFakeTimers();
    try {
      let runs = 0;
      let release: () => void = () => {};
      const ticking = every(
        5,
        async () => {
          if (++runs === 1) await new Promise<void>((resolve) => (release = resolve));
        },
        () => {},
      );
      await vi.advanceTimersByTimeAsync(20);
      // Four ticks came while the first run was held: none started beside it.
      expect(runs).toBe(1);
      release();
      await vi.advanceTimersByTimeAsync(5);
      expect(runs).toBe(2);
      await ticking.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('runs the first time at once, not a period later', async () => {
    let runs = 0;
    const ticking = every(
      60_000,
      async () => void runs++,
      () => {},
    );
    await expect.poll(() => runs).toBe(1);
    await ticking.stop();
  });

  it('hands a failed run to onError and goes on', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const ticking = every(
      5,
      async () => {
        if (++runs === 1) throw new Error('first fails');
      },
      (error) => errors.push(error),
    );
    await expect.poll(() => runs).toBeGreaterThan(1);
    await ticking.stop();
    expect(errors).toEqual([new Error('first fails')]);
  });
});
