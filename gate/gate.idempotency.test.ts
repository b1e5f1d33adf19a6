// Idempotency keys through the gate: a client's key names its request, so the same key with other
// content is refused; a key of Gatepost's own (a broadcast's contact) names the message, which is
// a replay whatever its content has become.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../runtime/embedded/runtime.sqlite.testkit.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import { recipientActor } from '../actors/recipient/recipient.actor.ts';
import { tenantActor } from '../actors/tenant/tenant.actor.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { keyRecord } from '../store/catalog.port.ts';
import { createGate, type Ingress, type Sender } from './gate.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  catalog?.close();
  await h.cleanup();
});

const sender: Sender = {
  tenant: {
    id: 'ten_1',
    name: 't',
    default_from: 'app@sender.example',
    quota: { per_second: null, per_day: null },
    queue_weight: 1,
    created_at: '',
  },
  key: keyRecord({ id: 'key_1', tenant_id: 'ten_1', kind: 'live', name: null, prefix: 'gp_live_x' }, ''),
};

async function start() {
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.sqlite'));
  const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor] });
  return createGate({ invoker: runtime, catalog, senders: null });
}

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
    const gate = await start();
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
