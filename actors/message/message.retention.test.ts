// When a message's 90 days are over, its state and its delivery's state go, and its id (and so
// its idempotency key) is free again.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../dapr/runtime.port.ts';
import { EmbeddedRuntime } from '../../dapr/embedded/runtime.sqlite.ts';
import { eventually, harness, type Harness } from '../../dapr/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { registerActors } from '../../app/gatepost.ts';
import { DELIVERY_ACTOR } from '../delivery/delivery.actor.ts';
import { MESSAGE_ACTOR, messageActor } from './message.actor.ts';

let h: Harness;
let catalog: SqliteCatalog;
const runtimes: EmbeddedRuntime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.stop();
  await catalog.close();
  await h.cleanup();
});

async function start(): Promise<EmbeddedRuntime> {
  const runtime = new EmbeddedRuntime({ file: h.file, log: () => {} });
  registerActors(runtime, { catalog, relay: null, retrySchedule: [60_000] });
  await runtime.start();
  runtimes.push(runtime);
  return runtime;
}

describe('message retention', () => {
  it('removes the message and its delivery state when the retention reminder fires', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const runtime = await start();
    await actor(runtime, messageActor, 'msg_r').admit({
      tenant_id: 'ten_1',
      sandbox: true,
      stream: 'transactional',
      ingress: 'api',
      request_hash: 'h',
      idempotency_key: 'k',
      tags: [],
      content: {
        from: 'a@sender.example',
        to: 'b@example.com',
        reply_to: null,
        subject: 's',
        html: '<p>h</p>',
        text: null,
        headers: {},
      },
      send_at: null,
      quota: { per_second: null, per_day: null },
    });
    await eventually(() => (h.stateOnDisk(DELIVERY_ACTOR, 'msg_r', 'delivery') as { done: boolean } | undefined)?.done === true);
    await runtime.stop();
    runtimes.length = 0;

    // Ninety days later, as far as the reminder is concerned.
    const db = new Database(h.file);
    db.prepare("UPDATE reminders SET due_at = 0 WHERE actor_type = ? AND name = 'expire'").run(MESSAGE_ACTOR);
    db.close();

    await start();
    await eventually(() => h.stateOnDisk(MESSAGE_ACTOR, 'msg_r', 'record') === undefined);
    await eventually(() => h.stateOnDisk(DELIVERY_ACTOR, 'msg_r', 'delivery') === undefined);
    expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_r', 'content')).toBeUndefined();
  });
});
