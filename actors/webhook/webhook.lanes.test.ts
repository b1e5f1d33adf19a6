// WebhookLanes on their own, with an invoker standing in for the endpoint's actor: a publication
// that arrives while the same event's attempt is under way is not lost.
import { describe, expect, it } from 'vitest';
import type { Invoker } from '../../runtime/runtime.port.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { WebhookPoster } from '../../webhooks/webhook.http.ts';
import { WebhookLanes } from './webhook.lanes.ts';

/** An actor whose `begin` calls wait until the test releases them, one by one, with an answer. */
function heldActor() {
  const begins: ((answer: null) => void)[] = [];
  const invoker: Invoker = {
    async invoke<R>(_type: string, _id: string, method: string): Promise<R> {
      if (method !== 'begin') throw new Error(`unexpected ${method}`);
      return new Promise<R>((resolve) => begins.push(() => resolve(null as R)));
    },
  };
  return { invoker, begins };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Lanes whose attempts go no further than `begin`: it never answers an attempt to make. */
const lanesOver = (invoker: Invoker) =>
  new WebhookLanes({ invoker, catalog: {} as Catalog, poster: {} as WebhookPoster, timeoutMs: 1000, log: () => {} });

describe('WebhookLanes', () => {
  it('looks at an event again when it is published while its attempt is under way', async () => {
    const { invoker, begins } = heldActor();
    const lanes = lanesOver(invoker);
    lanes.push('whk_1', 'evt_1');
    await settle();
    expect(begins).toHaveLength(1);
    // Published again (the turn that made it due) while the first attempt asks the actor.
    lanes.push('whk_1', 'evt_1');
    lanes.push('whk_1', 'evt_1');
    begins[0]!(null); // not due yet when the first attempt asked
    await settle();
    await settle();
    // Asked once more, once: the two publications while under way count as one.
    expect(begins).toHaveLength(2);
    begins[1]!(null);
    await settle();
    expect(lanes.stats()).toEqual({ lanes: 0, waiting: 0, running: 0 });
    await lanes.drain();
  });

  it('adds nothing for an event already waiting in its lane', async () => {
    const { invoker, begins } = heldActor();
    const lanes = lanesOver(invoker);
    for (let i = 0; i < 8; i++) lanes.push('whk_1', `evt_${i}`);
    lanes.push('whk_1', 'evt_8');
    lanes.push('whk_1', 'evt_8');
    await settle();
    expect(lanes.stats()).toEqual({ lanes: 1, waiting: 1, running: 8 });
    for (let i = 0; i < 8; i++) begins[i]!(null);
    await settle();
    await settle();
    expect(begins).toHaveLength(9);
    begins[8]!(null);
    await settle();
    expect(lanes.stats()).toEqual({ lanes: 0, waiting: 0, running: 0 });
    await lanes.drain();
  });
});
