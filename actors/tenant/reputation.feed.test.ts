// The breaker's input path: lifecycle events, as the webhook fan-out hands them on, reach the
// tenant's actor as signals. Complaints (email.complained, from feedback-loop reports) come
// through the same path; sandbox captures and soft bounces count for nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { loadConfig } from '../../config/config.ts';
import type { EventEnvelope } from '../../events/email.event.ts';
import { reputationListener } from './reputation.feed.ts';
import { tenantActor } from './tenant.actor.ts';

let h: Harness;
afterEach(() => h.cleanup());

const settings = { ...loadConfig({}).breaker, minSample: 10 };
let n = 0;
const event = (type: EventEnvelope['type'], data: Record<string, unknown> = {}): EventEnvelope => ({
  id: `evt_${++n}`,
  type,
  created_at: new Date().toISOString(),
  data: { message_id: `msg_${n}`, ...data },
});

describe('reputation feed', () => {
  it('counts live deliveries, hard bounces, blocks and complaints, and nothing else', async () => {
    h = harness();
    const runtime = await h.start({ actors: [tenantActor] });
    const hear = reputationListener(runtime, settings);
    const tell = (e: EventEnvelope) => hear({ tenant_id: 'ten_1', event: e });
    for (let i = 0; i < 5; i++) await tell(event('email.sent', { sandbox: false }));
    await tell(event('email.sent', { sandbox: true }));
    await tell(event('email.bounced', { bounce_type: 'soft' }));
    await tell(event('email.bounced', { bounce_type: 'block' }));
    await tell(event('email.bounced', { bounce_type: 'hard' }));
    await tell(event('email.opened'));
    await tell(event('email.complained'));
    const t = actor(runtime, tenantActor, 'ten_1');
    expect(await t.reputation(undefined)).toMatchObject({
      status: 'closed',
      window: { sample: 7, sent: 5, blocks: 1, hard_bounces: 1, complaints: 1 },
    });
  });

  it('a complaint rate over its threshold opens the breaker, durably', async () => {
    h = harness();
    const runtime = await h.start({ actors: [tenantActor] });
    const hear = reputationListener(runtime, settings);
    const tell = (e: EventEnvelope) => hear({ tenant_id: 'ten_2', event: e });
    for (let i = 0; i < 10; i++) await tell(event('email.sent', { sandbox: false }));
    await tell(event('email.complained'));
    expect(await actor(runtime, tenantActor, 'ten_2').reputation(undefined)).toMatchObject({
      status: 'open',
      window: { sample: 10, complaints: 1, complaint_rate: 0.1 },
      reason: 'complaint rate 10 % over 10 deliveries (opens at 0.3 %)',
    });
    expect(h.stateOnDisk('TenantActor', 'ten_2', 'reputation')).toMatchObject({ status: 'open' });
  });
});

describe('breaker per sending domain', () => {
  // One window a day: the day's cap is the window's.
  const warmup = { ...loadConfig({}).warmup, startPerDay: 2, fullPerDay: 1000, windowMs: 86_400_000 };

  it("keeps each sending domain's rates beside the tenant's: one domain's opening holds its mail only, and freezes its warmup", async () => {
    h = harness();
    const runtime = await h.start({ actors: [tenantActor] });
    const hear = reputationListener(runtime, settings);
    const tell = (e: EventEnvelope) => hear({ tenant_id: 'ten_3', event: e });
    // One complaint in 410 deliveries (0.24 %) warns the tenant; in the bad domain's 10 (10 %) it opens that domain's.
    for (let i = 0; i < 400; i++) await tell(event('email.sent', { sandbox: false, sending_domain: 'good.example' }));
    for (let i = 0; i < 10; i++) await tell(event('email.sent', { sandbox: false, sending_domain: 'bad.example' }));
    await tell(event('email.complained', { sending_domain: 'bad.example' }));
    const t = actor(runtime, tenantActor, 'ten_3');
    const view = await t.reputation(undefined);
    expect(view).toMatchObject({ status: 'warning', window: { sample: 410, complaints: 1 } });
    expect(view.domains.map((d) => [d.domain, d.status, d.window.sample])).toEqual([
      ['good.example', 'closed', 400],
      ['bad.example', 'open', 10],
    ]);
    expect(h.stateOnDisk('TenantActor', 'ten_3', 'reputation@bad.example')).toMatchObject({ status: 'open' });

    const ask = (domain: string, stream: 'transactional' | 'broadcast' = 'broadcast') =>
      t.admitDelivery({ stream, domain, settings, warmup });
    expect(await ask('bad.example')).toMatchObject({ go: false, by: 'breaker' });
    expect(await ask('good.example')).toEqual({ go: true });
    // The tenant's warning freezes the good domain's ramp; the bad domain's own breaker freezes its.
    expect(await t.warmup({ domain: 'good.example', settings: warmup })).toMatchObject({ frozen: true, used_today: 1 });
  });

  it('holds a domain to its warmup caps in admitDelivery, and tells the next window', async () => {
    h = harness();
    const runtime = await h.start({ actors: [tenantActor] });
    const t = actor(runtime, tenantActor, 'ten_4');
    const ask = () => t.admitDelivery({ stream: 'transactional', domain: 'new.example', settings, warmup });
    expect(await ask()).toEqual({ go: true });
    expect(await ask()).toEqual({ go: true });
    const held = await ask();
    expect(held).toMatchObject({ go: false, by: 'warmup' });
    const view = await t.warmup({ domain: 'new.example', settings: warmup });
    expect(view).toMatchObject({ status: 'warming', day: 1, daily_cap: 2, used_today: 2, frozen: false });
    expect(held.go === false && held.at).toBe(Date.parse(view.next_window!));
    // Without a sending domain, or with warmup off, nothing caps the mail.
    expect(await t.admitDelivery({ stream: 'transactional', settings, warmup })).toEqual({ go: true });
    expect(
      await t.admitDelivery({ stream: 'transactional', domain: 'new.example', settings, warmup: { ...warmup, enabled: false } }),
    ).toEqual({
      go: true,
    });
    expect(await t.setWarmup({ domain: 'new.example', change: { action: 'skip' }, settings: warmup })).toMatchObject({
      status: 'warm',
    });
    expect(await ask()).toEqual({ go: true });
  });
});
