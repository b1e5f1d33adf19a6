// A live message's place in the fair queue, which the hand-over carries so that taking it is no
// turn: what the queue needs of it, kept when it is handed over again (its `queued_at` is its place
// after a restart), and the reminder that hands it over again should it not be attempted, as long
// as it has waited (mta/fair.queue.ts's queueLease): the message's watchdog for a first hand-over,
// the `queued` reminder for a retry, which the attempt deletes. A message held by a breaker or the
// warmup is not attempted when its watchdog hands it over before its hold ends.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { loadConfig } from '../../config/config.ts';
import { QUEUE_LEASE } from '../../mta/fair.queue.ts';
import { unanswered } from '../../mta/transport.ts';
import { MESSAGE_ACTOR, MESSAGE_READY, messageActor } from '../message/message.actor.ts';
import type { MessageReady } from '../message/message.state.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';
import { DELIVERY_ACTOR, deliveryActor, QUEUED } from './delivery.actor.ts';

let h: Harness;
afterEach(async () => {
  await h.cleanup();
});

/** Every attempt defers (two retries, an hour apart). */
function delivery(breaker = loadConfig({}).breaker) {
  return deliveryActor({
    transport: {
      send: async () => unanswered('transient', '451 try later'),
      transactions: (recipients) => [recipients],
      close: async () => {},
    },
    // A deferral has no receipt to sign.
    receiptKeys: { current: () => Promise.reject(new Error('no receipt for a deferral')) },
    signers: NO_SIGNERS,
    retrySchedule: [3_600_000, 3_600_000],
    horizonMs: 86_400_000,
    breaker,
    warmup: loadConfig({ GATEPOST_WARMUP: 'false' }).warmup,
    sourceIps: [],
  });
}

/** A runtime on the harness file whose hand-overs are kept in `ready`. */
async function start(d = delivery(), ready: MessageReady[] = []) {
  const runtime = await h.start({
    actors: [messageActor, recipientActor, tenantActor, d],
    subscribers: { [MESSAGE_READY]: async ({ data }) => void ready.push(data as MessageReady) },
  });
  return { runtime, ready };
}

const reminder = (type: string, id: string, name: string) =>
  h.read(
    (db) =>
      db.prepare('SELECT due_at, data FROM reminders WHERE actor_type = ? AND actor_id = ? AND name = ?').get(type, id, name) as
        { due_at: number; data: string | null } | undefined,
  );

/** Makes a reminder due now, on disk, while no runtime runs: the next start fires it. */
function dueNow(type: string, id: string, name: string): void {
  const db = new Database(h.file);
  db.prepare('UPDATE reminders SET due_at = 0 WHERE actor_type = ? AND actor_id = ? AND name = ?').run(type, id, name);
  db.close();
}

describe('a live message’s place in the fair queue', () => {
  it('is carried by the hand-over, watched as long as it has waited, and kept when the watchdog hands it over again', async () => {
    h = harness();
    const first = await start();
    const before = Date.now();
    await actor(first.runtime, messageActor, 'msg_q').admit(admitArgs({ stream: 'broadcast' }));
    await eventually(() => first.ready.length === 1);
    const place = first.ready[0]!;
    expect(place).toEqual({
      message_id: 'msg_q',
      sandbox: false,
      tenant_id: 'ten_1',
      stream: 'broadcast',
      destination: 'example.com',
      queued_at: expect.any(Number),
    });
    const queuedAt = place.sandbox ? 0 : place.queued_at;
    expect(queuedAt).toBeGreaterThanOrEqual(before);
    const watch = reminder(MESSAGE_ACTOR, 'msg_q', 'watch')!.due_at;
    expect(watch - queuedAt).toBeGreaterThanOrEqual(QUEUE_LEASE.minMs);
    expect(watch - queuedAt).toBeLessThan(QUEUE_LEASE.minMs + 5_000);

    // Never attempted (the process died with the message in its queue): the watchdog hands it over again, in its old place.
    await first.runtime.stop();
    dueNow(MESSAGE_ACTOR, 'msg_q', 'watch');
    const again = await start();
    await eventually(() => again.ready.length === 1);
    expect(again.ready[0]).toEqual(place);
    // It has waited longer than the lease's least now: watched again for about as long as it has waited.
    const next = reminder(MESSAGE_ACTOR, 'msg_q', 'watch')!.due_at;
    expect(next).toBeGreaterThanOrEqual(Date.now() + QUEUE_LEASE.minMs - 1_000);
  });

  it('a retry comes to the queue with its place, renewed by its `queued` reminder until its attempt deletes it', async () => {
    h = harness();
    const d = delivery();
    const first = await start(d);
    await actor(first.runtime, messageActor, 'msg_r').admit(
      admitArgs({ content: { ...admitArgs().content, to: 'b@Later.Example' } }),
    );
    const deliveryOf = (runtime: typeof first.runtime) => actor(runtime, d, 'msg_r');
    const { number, interrupted } = await deliveryOf(first.runtime).begin(undefined);
    expect(await deliveryOf(first.runtime).attempt({ number, interrupted })).toBe('deferred');
    // The first hand-over's watchdog waits for the end of retention now: the delivery actor owns the retry.
    expect(reminder(MESSAGE_ACTOR, 'msg_r', 'watch')!.due_at).toBeGreaterThan(Date.now() + 86_400_000);
    expect(JSON.parse(reminder(DELIVERY_ACTOR, 'msg_r', 'retry')!.data!)).toEqual({
      tenant_id: 'ten_1',
      stream: 'transactional',
      destination: 'later.example',
    });
    expect(reminder(DELIVERY_ACTOR, 'msg_r', QUEUED)).toBeUndefined();

    await first.runtime.stop();
    dueNow(DELIVERY_ACTOR, 'msg_r', 'retry');
    const retry = await start(d);
    const firedAt = Date.now();
    await eventually(() => retry.ready.length === 1);
    const place = { tenant_id: 'ten_1', stream: 'transactional', destination: 'later.example' };
    expect(retry.ready[0]).toEqual({ message_id: 'msg_r', sandbox: false, ...place, queued_at: expect.any(Number) });
    const queuedAt = (retry.ready[0] as { queued_at: number }).queued_at;
    expect(queuedAt).toBeGreaterThanOrEqual(firedAt);
    await eventually(() => reminder(DELIVERY_ACTOR, 'msg_r', QUEUED) !== undefined);
    const queued = reminder(DELIVERY_ACTOR, 'msg_r', QUEUED)!;
    expect(queued.due_at).toBe(queuedAt + QUEUE_LEASE.minMs);
    expect(JSON.parse(queued.data!)).toEqual({ ...place, queued_at: queuedAt });

    // Lost to a crash before its attempt: the `queued` reminder hands it over again, in the same place.
    await retry.runtime.stop();
    dueNow(DELIVERY_ACTOR, 'msg_r', QUEUED);
    const lost = await start(d);
    await eventually(() => lost.ready.length === 1);
    expect(lost.ready[0]).toEqual(retry.ready[0]);

    // The attempt replaces it with the next retry.
    const second = await deliveryOf(lost.runtime).begin(undefined);
    expect(await deliveryOf(lost.runtime).attempt(second)).toBe('deferred');
    expect(reminder(DELIVERY_ACTOR, 'msg_r', QUEUED)).toBeUndefined();
    expect(reminder(DELIVERY_ACTOR, 'msg_r', 'retry')!.due_at).toBeGreaterThan(Date.now());
  });

  it('a message held by an open breaker is not attempted when it is handed over before its hold ends', async () => {
    h = harness();
    const breaker = loadConfig({ GATEPOST_BREAKER_MIN_SAMPLE: '2' }).breaker;
    const d = delivery(breaker);
    const { runtime } = await start(d);
    // Two hard bounces in a sample of two: the tenant's breaker opens, and a broadcast waits for its cool-down.
    for (let i = 0; i < 2; i++)
      await actor(runtime, tenantActor, 'ten_1').observeReputation({ signal: 'hard', settings: breaker });
    await actor(runtime, messageActor, 'msg_h').admit(admitArgs({ stream: 'broadcast' }));
    const first = await actor(runtime, d, 'msg_h').begin(undefined);
    expect(await actor(runtime, d, 'msg_h').attempt(first)).toBe('held');
    const heldUntil = reminder(DELIVERY_ACTOR, 'msg_h', 'retry')!.due_at;
    expect(heldUntil).toBeGreaterThan(Date.now());

    // The message's watchdog sees no outcome, and hands it over again: it is not attempted before its slot.
    expect(await actor(runtime, d, 'msg_h').begin(undefined)).toEqual({ attempt: false, interrupted: false });
    expect(reminder(DELIVERY_ACTOR, 'msg_h', 'retry')!.due_at).toBe(heldUntil);
  });
});
