// The gate takes sends from a tenant's quota a group at a time: the admissions of one turn of the
// event loop make one call to the tenant's actor, and each gets its own answer from the grant.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Invoker } from '../runtime/runtime.port.ts';
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
  tenant: { id: 'ten_1', name: 't', default_from: 'app@sender.example', quota, created_at: '' },
  key: keyRecord({ id: 'key_1', tenant_id: 'ten_1', kind: 'live', name: null, prefix: 'gp_live_x' }, ''),
});

/** A gate over a started runtime, and the calls it made to TenantActor, by method. */
async function start() {
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.sqlite'));
  const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, batchActor] });
  const tenantCalls: string[] = [];
  const invoker: Invoker = {
    invoke: (type, id, method, args, options) => {
      if (type === TENANT_ACTOR) tenantCalls.push(method);
      return runtime.invoke(type, id, method, args, options);
    },
  };
  return { gate: createGate({ invoker, catalog }), tenantCalls };
}

const send = (n: number) => ({ to: `r${n}@example.com`, subject: 's', html: '<p>h</p>' });

describe('the quota, taken by the gate', () => {
  it('takes the sends admitted together in one call, and refuses those past the quota', async () => {
    const { gate, tenantCalls } = await start();
    const sender = senderWith({ per_second: null, per_day: 3 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, n) => gate.admit({ sender, ingress: 'api', draft: send(n) })),
    );
    expect(tenantCalls).toEqual(['reserve']);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(refused).toHaveLength(2);
    for (const error of refused) expect(error).toMatchObject({ code: 'quota_exceeded', retryAfter: expect.any(Number) });
  });

  it('answers a replay at the quota as a replay, and gives its send back', async () => {
    const { gate, tenantCalls } = await start();
    const sender = senderWith({ per_second: null, per_day: 1 });
    const first = await gate.admit({ sender, ingress: 'api', draft: send(1), idempotencyKey: 'k1' });
    // The quota is used up; the same request again is still its replay.
    const again = await gate.admit({ sender, ingress: 'api', draft: send(1), idempotencyKey: 'k1' });
    expect(again).toEqual({ response: first.response, replayed: true });
    await expect(gate.admit({ sender, ingress: 'api', draft: send(2) })).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(tenantCalls).toEqual(['reserve', 'reserve', 'reserve']);
  });

  it('takes a batch of 500 in one call', async () => {
    const { gate, tenantCalls } = await start();
    const sender = senderWith({ per_second: null, per_day: null });
    const items = Array.from({ length: 500 }, (_, n) => ({ draft: send(n) }));
    const results = await gate.admitAll({ sender, ingress: 'api_batch', items, refusals: 'per_item' });
    expect(results.every((r) => 'ok' in r)).toBe(true);
    expect(tenantCalls).toEqual(['reserve']);
  });
});
