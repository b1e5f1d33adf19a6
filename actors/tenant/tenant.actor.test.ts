// TenantActor's quota: a group of sends gets what is left of the day and of the second, and the
// sends given back count no more.
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { tenantActor } from './tenant.actor.ts';

let h: Harness;
afterEach(() => h.cleanup());

/** The tenant's actor client (in an object: a client, being a proxy, would look awaitable). */
async function tenant() {
  h = harness();
  const runtime = await h.start({ actors: [tenantActor] });
  return { t: actor(runtime, tenantActor, 'ten_1') };
}

describe('TenantActor.reserve', () => {
  it('grants a group what is left of the daily quota and refuses the rest until midnight UTC', async () => {
    const { t } = await tenant();
    const quota = { per_second: null, per_day: 5 };
    expect(await t.reserve({ quota, count: 3 })).toEqual({ granted: 3, refusal: null });
    const secondsToMidnight = () => 86_400 - (Math.floor(Date.now() / 1000) % 86_400);
    const atMost = secondsToMidnight();
    const partly = await t.reserve({ quota, count: 4 });
    const atLeast = secondsToMidnight();
    expect(partly.granted).toBe(2);
    expect(partly.refusal).toMatchObject({ code: 'quota_exceeded', message: expect.stringMatching(/daily quota of 5/) });
    // The seconds left to 00:00 UTC when it answered: between those before and after the call.
    expect(partly.refusal!.retry_after).toBeGreaterThanOrEqual(atLeast);
    expect(partly.refusal!.retry_after).toBeLessThanOrEqual(atMost);
    expect(await t.reserve({ quota, count: 1 })).toMatchObject({ granted: 0, refusal: { code: 'quota_exceeded' } });
  });

  it('refuses past the rate per second with Retry-After 1, and counts nothing it refused', async () => {
    const { t } = await tenant();
    const quota = { per_second: 2, per_day: 100 };
    // A second's count starts again each second: tried again until both groups fall in one.
    for (;;) {
      const second = Math.floor(Date.now() / 1000);
      const first = await t.reserve({ quota, count: 5 });
      const next = await t.reserve({ quota, count: 1 });
      if (Math.floor(Date.now() / 1000) !== second) continue;
      expect(first).toMatchObject({ granted: 2, refusal: { code: 'rate_limited', retry_after: 1 } });
      expect(next).toMatchObject({ granted: 0, refusal: { code: 'rate_limited' } });
      break;
    }
    // Only granted sends count toward the day: two a second tried.
    const { day_count } = h.stateOnDisk('TenantActor', 'ten_1', 'quota') as { day_count: number };
    expect(day_count % 2).toBe(0);
  });

  it('counts no more the sends given back', async () => {
    const { t } = await tenant();
    const quota = { per_second: null, per_day: 2 };
    expect(await t.reserve({ quota, count: 2 })).toEqual({ granted: 2, refusal: null });
    await t.giveBack({ count: 1 });
    expect(await t.reserve({ quota, count: 2 })).toMatchObject({ granted: 1, refusal: { code: 'quota_exceeded' } });
    await t.giveBack({ count: 5 });
    expect(h.stateOnDisk('TenantActor', 'ten_1', 'quota')).toMatchObject({ day_count: 0 });
  });
});
