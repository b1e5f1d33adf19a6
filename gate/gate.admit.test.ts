// Admission through the gate. The quota: each admission takes its send from the tenant's quota in
// the message actor's turn; sends admitted together past the quota are refused, a replay is not.
// Idempotency keys: a client's key names its request, so the same key with other content is
// refused; a key of Gatepost's own (a broadcast's contact) names the message, which is a replay
// whatever its content has become.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../runtime/embedded/runtime.sqlite.testkit.ts';
import { batchActor } from '../actors/batch/batch.actor.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import { recipientActor } from '../actors/recipient/recipient.actor.ts';
import { TENANT_ACTOR, tenantActor } from '../actors/tenant/tenant.actor.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { createGate, type Ingress } from './gate.ts';
import { senderWith } from './gate.testkit.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  catalog?.close();
  await h.cleanup();
});

/** A gate over a started runtime. */
async function start() {
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.sqlite'));
  const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, batchActor] });
  return { gate: createGate({ invoker: runtime, catalog, senders: null }) };
}

/** The sends the tenant's quota counts today, as on disk. */
const dayCount = () => (h.stateOnDisk(TENANT_ACTOR, 'ten_1', 'quota') as { day_count: number }).day_count;

const send = (n: number) => ({ to: `r${n}@example.com`, subject: 's', html: '<p>h</p>' });

describe('the quota, through the gate', () => {
  it('takes the sends admitted together, and refuses those past the quota', async () => {
    const { gate } = await start();
    const sender = senderWith({ per_second: null, per_day: 3 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, n) => gate.admit({ sender, ingress: 'api', draft: send(n) })),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(refused).toHaveLength(2);
    for (const error of refused) expect(error).toMatchObject({ code: 'quota_exceeded', retryAfter: expect.any(Number) });
  });

  it('answers a replay at the quota as a replay, and takes no send for it', async () => {
    const { gate } = await start();
    const sender = senderWith({ per_second: null, per_day: 1 });
    const first = await gate.admit({ sender, ingress: 'api', draft: send(1), idempotencyKey: 'k1' });
    // The quota is used up; the same request again is still its replay.
    const again = await gate.admit({ sender, ingress: 'api', draft: send(1), idempotencyKey: 'k1' });
    expect(again).toEqual({ response: first.response, replayed: true });
    await expect(gate.admit({ sender, ingress: 'api', draft: send(2) })).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(dayCount()).toBe(1);
  });

  it('takes a send for each message of a batch of 500', async () => {
    const { gate } = await start();
    const sender = senderWith({ per_second: null, per_day: null });
    const items = Array.from({ length: 500 }, (_, n) => ({ draft: send(n) }));
    const results = await gate.admitAll({ sender, ingress: 'api_batch', items, refusals: 'per_item' });
    expect(results.every((r) => 'ok' in r)).toBe(true);
    expect(dayCount()).toBe(500);
  });
});

/** The same message to one contact, its merge data as it was and as it became. */
const draft = (plan: string) => ({
  to: 'Ann <ann@example.com>',
  subject: 'News',
  html: '<p>You are on {{plan}}.</p>',
  data: { plan },
  stream: 'broadcast' as const,
  sandbox: true,
});

describe('idempotency keys, through the gate', () => {
  it("refuses a client's key again with other content, and replays a broadcast's whatever its content became", async () => {
    const { gate } = await start();
    const sender = senderWith();
    const admit = (ingress: Ingress, key: string, plan: string) =>
      gate.admit({ sender, ingress, idempotencyKey: key, draft: draft(plan) });

    expect((await admit('api', 'order-1', 'pro')).replayed).toBe(false);
    await expect(admit('api', 'order-1', 'free')).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect((await admit('api', 'order-1', 'pro')).replayed).toBe(true);

    const fanned = await admit('broadcast', 'brd_1:con_1', 'pro');
    expect(fanned.replayed).toBe(false);
    // The contact's data changed before the fan-out resumed: the same message, not a refusal.
    const resumed = await admit('broadcast', 'brd_1:con_1', 'free');
    expect(resumed).toEqual({ response: fanned.response, replayed: true });
  });
});
