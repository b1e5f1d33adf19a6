// TenantActor's quota: each send takes one from what is left of the day and of the second, and a
// refused send counts nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import type { Quota } from '../../store/catalog.port.ts';
import { tenantActor } from './tenant.actor.ts';

let h: Harness;
afterEach(() => h.cleanup());

/** The tenant's actor client (in an object: a client, being a proxy, would look awaitable). */
async function tenant() {
  h = harness();
  const runtime = await h.start({ actors: [tenantActor] });
  return { t: actor(runtime, tenantActor, 'ten_1') };
}

/** Takes `count` sends one after the other; answers how many were taken and the first refusal. */
async function takeMany(t: Awaited<ReturnType<typeof tenant>>['t'], quota: Quota, count: number) {
  let taken = 0;
  for (let i = 0; i < count; i++) {
    try {
      await t.take({ quota });
      taken++;
    } catch (error) {
      return { taken, refusal: error };
    }
  }
  return { taken, refusal: null };
}

const dayCount = () => (h.stateOnDisk('TenantActor', 'ten_1', 'quota') as { day_count: number }).day_count;

describe('TenantActor.take', () => {
  it('takes what is left of the daily quota and refuses the rest until midnight UTC', async () => {
    const { t } = await tenant();
    const quota = { per_second: null, per_day: 5 };
    expect(await takeMany(t, quota, 3)).toEqual({ taken: 3, refusal: null });
    const secondsToMidnight = () => 86_400 - (Math.floor(Date.now() / 1000) % 86_400);
    const atMost = secondsToMidnight();
    const partly = await takeMany(t, quota, 4);
    const atLeast = secondsToMidnight();
    expect(partly.taken).toBe(2);
    expect(partly.refusal).toMatchObject({ code: 'quota_exceeded', message: expect.stringMatching(/daily quota of 5/) });
    // The seconds left to 00:00 UTC when it answered: between those before and after the call.
    const { retryAfter } = partly.refusal as { retryAfter: number };
    expect(retryAfter).toBeGreaterThanOrEqual(atLeast);
    expect(retryAfter).toBeLessThanOrEqual(atMost);
    await expect(t.take({ quota })).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(dayCount()).toBe(5);
  });

  it('refuses past the rate per second with Retry-After 1, and counts nothing it refused', async () => {
    const { t } = await tenant();
    const quota = { per_second: 2, per_day: 100 };
    // A second's count starts again each second: tried again until both groups fall in one.
    for (;;) {
      const second = Math.floor(Date.now() / 1000);
      const first = await takeMany(t, quota, 5);
      const next = await takeMany(t, quota, 1);
      if (Math.floor(Date.now() / 1000) !== second) continue;
      expect(first).toMatchObject({ taken: 2, refusal: { code: 'rate_limited', retryAfter: 1 } });
      expect(next).toMatchObject({ taken: 0, refusal: { code: 'rate_limited' } });
      break;
    }
    // Only sends taken count toward the day: two a second tried.
    expect(dayCount() % 2).toBe(0);
  });

  it('tells a send refused by both the day and the second that the day is used up', async () => {
    const { t } = await tenant();
    const quota = { per_second: 1, per_day: 1 };
    await t.take({ quota });
    await expect(t.take({ quota })).rejects.toMatchObject({ code: 'quota_exceeded' });
  });
});
