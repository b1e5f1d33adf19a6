// DeliveryActor.enqueue, a message's place in the fair queue: what the queue needs of it, kept
// across renewals (its `queued_at` is its place after a restart), and a reminder as long as it has
// waited, within the lease's bounds; the attempt replaces the reminder.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { loadConfig } from '../../config/config.ts';
import { unanswered } from '../../mta/transport.ts';
import { messageActor } from '../message/message.actor.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';
import { DELIVERY_ACTOR, deliveryActor, QUEUED } from './delivery.actor.ts';

const LEASE = { minMs: 15_000, maxMs: 300_000 };
let h: Harness;
afterEach(async () => {
  vi.useRealTimers();
  await h.cleanup();
});

async function start() {
  h = harness();
  const delivery = deliveryActor({
    // Every attempt defers: the message stays to be delivered.
    transport: {
      send: async () => unanswered('transient', '451 try later'),
      transactions: (recipients) => [recipients],
      close: async () => {},
    },
    // A deferral has no receipt to sign.
    receiptKeys: { current: () => Promise.reject(new Error('no receipt for a deferral')) },
    signers: NO_SIGNERS,
    retrySchedule: [3_600_000],
    horizonMs: 86_400_000,
    breaker: loadConfig({}).breaker,
    warmup: loadConfig({ GATEPOST_WARMUP: 'false' }).warmup,
    queueLease: LEASE,
  });
  const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, delivery] });
  const d = actor(runtime, delivery, 'msg_q');
  const reminder = (name: string) =>
    h.read(
      (db) =>
        db
          .prepare('SELECT due_at FROM reminders WHERE actor_type = ? AND actor_id = ? AND name = ?')
          .get(DELIVERY_ACTOR, 'msg_q', name) as { due_at: number } | undefined,
    )?.due_at;
  return { runtime, d, reminder };
}

describe('DeliveryActor.enqueue', () => {
  it('answers the place, keeps it across renewals, and sets a reminder as long as the message has waited', async () => {
    const { runtime, d, reminder } = await start();
    await actor(runtime, messageActor, 'msg_q').admit(admitArgs({ stream: 'broadcast' }));
    vi.useFakeTimers({ toFake: ['Date'] });
    const t0 = Date.now();

    expect(await d.enqueue(undefined)).toEqual({
      tenant_id: 'ten_1',
      stream: 'broadcast',
      destination: 'example.com',
      queued_at: t0,
    });
    expect(reminder(QUEUED)).toBe(t0 + LEASE.minMs);

    vi.setSystemTime(t0 + 60_000);
    expect((await d.enqueue(undefined))?.queued_at).toBe(t0);
    expect(reminder(QUEUED)).toBe(t0 + 60_000 + 60_000);

    vi.setSystemTime(t0 + 3_600_000);
    await d.enqueue(undefined);
    expect(reminder(QUEUED)).toBe(t0 + 3_600_000 + LEASE.maxMs);
  });

  it('the attempt replaces the reminder with its retry, and the next enqueue is a new place', async () => {
    const { runtime, d, reminder } = await start();
    await actor(runtime, messageActor, 'msg_q').admit(admitArgs());
    const first = await d.enqueue(undefined);
    const { number, interrupted } = await d.begin(undefined);
    expect(await d.attempt({ number, interrupted })).toBe('deferred');
    expect(reminder(QUEUED)).toBeUndefined();
    expect(reminder('retry')).toBeGreaterThan(Date.now());
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(first!.queued_at + 1_000);
    expect((await d.enqueue(undefined))?.queued_at).toBe(first!.queued_at + 1_000);
  });

  it('answers null for a message that is gone or whose delivery is over', async () => {
    const { d, reminder } = await start();
    expect(await d.enqueue(undefined)).toBeNull();
    expect(reminder(QUEUED)).toBeUndefined();
    expect(await d.enqueue(undefined)).toBeNull();
  });
});
