// A live message's place in the fair queue, which the hand-over carries so that taking it is no
// turn: what the queue needs of it, kept when it is handed over again (its `queued_at` is its place
// after a restart). On a runtime that delivers until handled, the subscriber holds the hand-over
// until the message is attempted (runtime.port.ts's Held), and no reminder is set; elsewhere a
// `queued` reminder hands a retry over again. A message held by a breaker or the warmup is not
// attempted when it is handed over again before its hold ends.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { actor, type Delivery } from '../../runtime/runtime.port.ts';
import { deferred } from '../../lib/deferred.ts';
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
  it('is carried by the hand-over, which its subscriber holds until the message is attempted, and comes back in its old place after a crash', async () => {
    h = harness();
    const ready: MessageReady[] = [];
    /** A runtime whose subscriber holds each hand-over until `until` settles. */
    const holding = (until: Promise<void>) =>
      h.start({
        actors: [messageActor, recipientActor, tenantActor, delivery()],
        subscribers: {
          [MESSAGE_READY]: async ({ data }: Delivery) => (
            ready.push(data as MessageReady),
            { until, leaseMs: QUEUE_LEASE.minMs }
          ),
        },
      });
    const first = await holding(new Promise<void>(() => undefined));
    const before = Date.now();
    await actor(first, messageActor, 'msg_q').admit(admitArgs({ stream: 'broadcast' }));
    await eventually(() => ready.length === 1);
    const place = ready[0]!;
    expect(place).toEqual({
      message_id: 'msg_q',
      sandbox: false,
      tenant_id: 'ten_1',
      stream: 'broadcast',
      destination: 'example.com',
      queued_at: expect.any(Number),
    });
    expect(place.sandbox ? 0 : place.queued_at).toBeGreaterThanOrEqual(before);
    // The held hand-over stands for a watchdog: the message sets none (its outbox row stays).
    expect(reminder(MESSAGE_ACTOR, 'msg_q', 'watch')).toBeUndefined();

    // Never attempted (the process died with the message in its queue): handed over again, in its old place.
    await first.stop();
    const attempted = deferred<void>();
    const again = await holding(attempted.promise);
    await eventually(() => ready.length === 2);
    expect(ready[1]).toEqual(place);

    // Once the hold ends, the hand-over is done with.
    attempted.resolve();
    await eventually(() => h.read((db) => db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n === 0);
    await again.stop();
  });

  it('a retry comes to the queue with its place, its hand-over held like the first', async () => {
    h = harness();
    const d = delivery();
    const first = await start(d);
    await actor(first.runtime, messageActor, 'msg_r').admit(
      admitArgs({ content: { ...admitArgs().content, to: 'b@Later.Example' } }),
    );
    const deliveryOf = (runtime: typeof first.runtime) => actor(runtime, d, 'msg_r');
    const { number, interrupted } = await deliveryOf(first.runtime).begin(undefined);
    expect(await deliveryOf(first.runtime).attempt({ number, interrupted })).toBe('deferred');
    // The message's one reminder waits for the end of retention now: the delivery actor owns the retry.
    expect(reminder(MESSAGE_ACTOR, 'msg_r', 'watch')!.due_at).toBeGreaterThan(Date.now() + 86_400_000);
    expect(JSON.parse(reminder(DELIVERY_ACTOR, 'msg_r', 'retry')!.data!)).toEqual({
      tenant_id: 'ten_1',
      stream: 'transactional',
      destination: 'later.example',
    });

    await first.runtime.stop();
    dueNow(DELIVERY_ACTOR, 'msg_r', 'retry');
    const retry = await start(d);
    const firedAt = Date.now();
    await eventually(() => retry.ready.length === 1);
    const place = { tenant_id: 'ten_1', stream: 'transactional', destination: 'later.example' };
    expect(retry.ready[0]).toEqual({ message_id: 'msg_r', sandbox: false, ...place, queued_at: expect.any(Number) });
    expect((retry.ready[0] as { queued_at: number }).queued_at).toBeGreaterThanOrEqual(firedAt);
    // Published in the turn that would have set the `queued` reminder: a runtime that delivers until handled needs none.
    expect(reminder(DELIVERY_ACTOR, 'msg_r', QUEUED)).toBeUndefined();
  });

  it('a `queued` reminder (set where a broker may lose a hand-over) hands the retry over again in its place', async () => {
    h = harness();
    const d = delivery();
    const first = await start(d);
    await actor(first.runtime, messageActor, 'msg_l').admit(admitArgs());
    await first.runtime.stop();
    const place = { tenant_id: 'ten_1', stream: 'transactional', destination: 'example.com', queued_at: 1_000 };
    const db = new Database(h.file);
    db.prepare('INSERT INTO reminders (actor_type, actor_id, name, due_at, data) VALUES (?, ?, ?, 0, ?)').run(
      DELIVERY_ACTOR,
      'msg_l',
      QUEUED,
      JSON.stringify(place),
    );
    db.prepare('DELETE FROM outbox').run();
    db.close();
    const lost = await start(d);
    await eventually(() => lost.ready.length === 1);
    expect(lost.ready[0]).toEqual({ message_id: 'msg_l', sandbox: false, ...place });
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

    // Handed over again (a hand-over delivered again) before its hold ends: it is not attempted before its slot.
    expect(await actor(runtime, d, 'msg_h').begin(undefined)).toEqual({ attempt: false, interrupted: false });
    expect(reminder(DELIVERY_ACTOR, 'msg_h', 'retry')!.due_at).toBe(heldUntil);
  });
});
