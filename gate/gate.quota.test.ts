// The quota through the gate: each admission takes its send from the tenant's quota in the
// message actor's turn; sends admitted together past the quota are refused, a replay is not.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../runtime/embedded/runtime.sqlite.testkit.ts';
import { batchActor } from '../actors/batch/batch.actor.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import { recipientActor } from '../actors/recipient/recipient.actor.ts';
import { TENANT_ACTOR, tenantActor } from '../actors/tenant/tenant.actor.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { keyRecord, type Quota } from '../store/catalog.port.ts';
import { createGate, type Sender } from './gate.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  catalog?.close();
  await h.cleanup();
});

const senderWith = (quota: Quota): Sender => ({
  tenant: { id: 'ten_1', name: 't', default_from: 'app@sender.example', quota, queue_weight: 1, created_at: '' },
  key: keyRecord({ id: 'key_1', tenant_id: 'ten_1', kind: 'live', name: null, prefix: 'gp_live_x' }, ''),
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
