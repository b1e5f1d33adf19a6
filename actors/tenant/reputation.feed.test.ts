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
