// Pub/sub of the embedded runtime: every message published by a committed turn reaches its
// topic's subscriber at least once, with a delivery id that stays the same across retries and
// restarts (runtime/runtime.port.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { actor, defineActor, type ActorTurn, type Delivery } from '../runtime.port.ts';
import { deferred } from '../../lib/deferred.ts';
import { eventually, harness, type Harness } from './runtime.sqlite.testkit.ts';

let h: Harness;
beforeEach(() => {
  h = harness();
});
afterEach(async () => {
  await h.cleanup();
});

const publisher = defineActor({
  type: 'publisher',
  methods: {
    async publish(turn: ActorTurn, args: { topic: string; data: unknown }) {
      turn.set('last', args.data);
      turn.publish(args.topic, args.data);
    },
  },
});

const outboxOnDisk = () =>
  h.read((db) => db.prepare('SELECT delivery_id AS id, topic, data FROM outbox ORDER BY seq').all()) as {
    id: string;
    topic: string;
    data: string;
  }[];

describe('pub/sub', () => {
  it('delivers a published message after its turn is committed, with a delivery id', async () => {
    const seen: { delivery: Delivery; stateOnDisk: unknown; outboxOnDisk: unknown }[] = [];
    const rt = await h.start({
      actors: [publisher],
      subscribers: {
        events: async (delivery) => {
          // At the time of delivery the publishing turn's write and the outbox row are on disk.
          seen.push({
            delivery,
            stateOnDisk: h.stateOnDisk('publisher', 'p1', 'last'),
            outboxOnDisk: outboxOnDisk().map((r) => r.id),
          });
        },
      },
    });
    await actor(rt, publisher, 'p1').publish({ topic: 'events', data: { n: 1 } });
    await eventually(() => expect(seen).toHaveLength(1));
    const [{ delivery, stateOnDisk, outboxOnDisk: rows }] = seen as [(typeof seen)[0]];
    expect(delivery).toMatchObject({ topic: 'events', data: { n: 1 } });
    expect(delivery.id).toMatch(/^pub_[0-9a-z]{26}$/);
    expect(stateOnDisk).toEqual({ n: 1 });
    expect(rows).toEqual([delivery.id]);
    // Acknowledged: the row is deleted.
    await eventually(() => expect(outboxOnDisk()).toEqual([]));
  });

  it('each publication has its own id', async () => {
    const ids: string[] = [];
    const rt = await h.start({ actors: [publisher], subscribers: { events: async (d) => void ids.push(d.id) } });
    for (let i = 0; i < 3; i++) await actor(rt, publisher, 'p1').publish({ topic: 'events', data: i });
    await eventually(() => expect(ids).toHaveLength(3));
    expect(new Set(ids).size).toBe(3);
  });

  it('a subscriber that throws is called again with the same delivery', async () => {
    const calls: Delivery[] = [];
    const rt = await h.start({
      actors: [publisher],
      subscribers: {
        events: async (d) => {
          calls.push(d);
          if (calls.length === 1) throw new Error('subscriber fails on purpose');
        },
      },
    });
    await actor(rt, publisher, 'p1').publish({ topic: 'events', data: { n: 1 } });
    await eventually(() => expect(calls).toHaveLength(2), 3000);
    expect(calls[1]).toEqual(calls[0]);
    await eventually(() => expect(outboxOnDisk()).toEqual([]));
    expect(h.logs.some((l) => /subscriber of events failed/.test(l.message))).toBe(true);
  });

  it('a message whose subscriber failed before stop is delivered after a restart, same id', async () => {
    const first: Delivery[] = [];
    const rt1 = await h.start({
      actors: [publisher],
      subscribers: {
        events: async (d) => {
          first.push(d);
          throw new Error('down');
        },
      },
    });
    await actor(rt1, publisher, 'p1').publish({ topic: 'events', data: 'survives' });
    await eventually(() => expect(first).toHaveLength(1));
    await rt1.stop();
    expect(outboxOnDisk()).toMatchObject([{ id: first[0]!.id, topic: 'events', data: '"survives"' }]);

    const second: Delivery[] = [];
    await h.start({ actors: [publisher], subscribers: { events: async (d) => void second.push(d) } });
    await eventually(() => expect(second).toEqual([first[0]]));
    await eventually(() => expect(outboxOnDisk()).toEqual([]));
  });

  it('messages not yet dispatched at stop, and one whose subscriber was still running, are delivered after a restart', async () => {
    const running = deferred();
    const release = deferred();
    const first: Delivery[] = [];
    const rt1 = await h.start({
      actors: [publisher],
      options: { dispatchConcurrency: 1 },
      subscribers: {
        events: async (d) => {
          first.push(d);
          running.resolve();
          await release.promise;
          throw new Error('failed while stopping');
        },
      },
    });
    for (const n of [1, 2, 3]) await actor(rt1, publisher, 'p1').publish({ topic: 'events', data: n });
    await running.promise;
    let stopped = false;
    const stopping = rt1.stop().then(() => (stopped = true));
    // stop() waits for the running subscriber: the positive signal is that it says so.
    await eventually(() => expect(rt1.stats().draining).toBe('subscribers'));
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(first.map((d) => d.data)).toEqual([1]);
    expect(outboxOnDisk().map((r) => JSON.parse(r.data))).toEqual([1, 2, 3]);

    const second: Delivery[] = [];
    await h.start({ actors: [publisher], subscribers: { events: async (d) => void second.push(d) } });
    await eventually(() => expect(second.map((d) => d.data)).toEqual([1, 2, 3]));
    expect(second[0]!.id).toBe(first[0]!.id);
    await eventually(() => expect(outboxOnDisk()).toEqual([]));
  });

  it('a held delivery keeps its row, takes no dispatch slot, is delivered again when its hold fails, and goes when it ends', async () => {
    const holds = [deferred<void>(), deferred<void>()];
    const held: Delivery[] = [];
    const other: Delivery[] = [];
    const rt = await h.start({
      actors: [publisher],
      // One dispatch slot: a hold that took it would keep the other topic's message waiting.
      options: { dispatchConcurrency: 1 },
      subscribers: {
        waiting: async (delivery) => ({ until: holds[held.push(delivery) - 1]!.promise, leaseMs: 30_000 }),
        other: async (delivery) => void other.push(delivery),
      },
    });
    await actor(rt, publisher, 'p1').publish({ topic: 'waiting', data: { n: 1 } });
    await eventually(() => expect(held).toHaveLength(1));
    await actor(rt, publisher, 'p1').publish({ topic: 'other', data: { n: 2 } });
    await eventually(() => expect(other).toHaveLength(1));
    await eventually(() => expect(outboxOnDisk().map((r) => r.id)).toEqual([held[0]!.id]));

    holds[0]!.reject(new Error('the attempt failed'));
    await eventually(() => expect(held).toHaveLength(2));
    expect(held[1]!.id).toBe(held[0]!.id);
    holds[1]!.resolve();
    await eventually(() => expect(outboxOnDisk()).toEqual([]));
  });

  it('a topic with no subscriber drops the message without error', async () => {
    const other: Delivery[] = [];
    const rt = await h.start({ actors: [publisher], subscribers: { other: async (d) => void other.push(d) } });
    await actor(rt, publisher, 'p1').publish({ topic: 'nobody-listens', data: 1 });
    expect(h.stateOnDisk('publisher', 'p1', 'last')).toBe(1);
    expect(outboxOnDisk()).toEqual([]);
    // Published after it on a topic with a subscriber: comes through alone.
    await actor(rt, publisher, 'p1').publish({ topic: 'other', data: 2 });
    await eventually(() => expect(other.map((d) => d.data)).toEqual([2]));
    expect(h.logs).toEqual([]);
  });

  it('rows of a topic that lost its subscriber across a restart are dropped', async () => {
    const rt1 = await h.start({
      actors: [publisher],
      subscribers: {
        gone: async () => {
          throw new Error('down');
        },
      },
    });
    await actor(rt1, publisher, 'p1').publish({ topic: 'gone', data: 1 });
    await eventually(() => expect(h.logs.length).toBeGreaterThan(0));
    await rt1.stop();
    expect(outboxOnDisk()).toHaveLength(1);
    await h.start({ actors: [publisher] });
    await eventually(() => expect(outboxOnDisk()).toEqual([]));
  });
});
