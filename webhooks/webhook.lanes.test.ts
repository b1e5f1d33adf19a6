// WebhookLanes on their own, with attempts that wait until the test ends them: a publication that
// arrives while the same event's attempt is under way is not lost, and one already waiting adds nothing.
import { describe, expect, it } from 'vitest';
import { WebhookLanes } from './webhook.lanes.ts';

/** Lanes whose attempts are recorded and wait until the test ends them, one by one. */
function heldLanes() {
  const attempts: { eventId: string; end: () => void }[] = [];
  const lanes = new WebhookLanes({
    attempt: (_endpointId, eventId) => new Promise<void>((end) => attempts.push({ eventId, end })),
    log: () => {},
  });
  return { lanes, attempts };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('WebhookLanes', () => {
  it('looks at an event again when it is published while its attempt is under way', async () => {
    const { lanes, attempts } = heldLanes();
    lanes.push('whk_1', 'evt_1');
    await settle();
    expect(attempts).toHaveLength(1);
    // Published again (the turn that made it due) while the first attempt asks the actor.
    lanes.push('whk_1', 'evt_1');
    lanes.push('whk_1', 'evt_1');
    attempts[0]!.end(); // not due yet when the first attempt asked
    await settle();
    await settle();
    // Attempted once more, once: the two publications while under way count as one.
    expect(attempts.map((a) => a.eventId)).toEqual(['evt_1', 'evt_1']);
    attempts[1]!.end();
    await settle();
    expect(lanes.stats()).toEqual({ lanes: 0, waiting: 0, running: 0 });
    await lanes.drain();
  });

  it('adds nothing for an event already waiting in its lane', async () => {
    const { lanes, attempts } = heldLanes();
    for (let i = 0; i < 8; i++) lanes.push('whk_1', `evt_${i}`);
    lanes.push('whk_1', 'evt_8');
    lanes.push('whk_1', 'evt_8');
    await settle();
    expect(lanes.stats()).toEqual({ lanes: 1, waiting: 1, running: 8 });
    for (let i = 0; i < 8; i++) attempts[i]!.end();
    await settle();
    await settle();
    expect(attempts).toHaveLength(9);
    attempts[8]!.end();
    await settle();
    expect(lanes.stats()).toEqual({ lanes: 0, waiting: 0, running: 0 });
    await lanes.drain();
  });
});
