// When a message's 90 days are over, its state, its delivery's state and its opens and clicks go,
// and its id (and so its idempotency key) is free again.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { EmbeddedRuntime } from '../../runtime/embedded/runtime.sqlite.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { registerActors } from '../../app/gatepost.ts';
import { unreachableRelay } from '../../test/harness/relay.harness.ts';
import { DELIVERY_ACTOR } from '../delivery/delivery.actor.ts';
import { MESSAGE_ACTOR, messageActor } from './message.actor.ts';
import { RETENTION_MS } from './message.state.ts';
import { admitArgs } from './message.testkit.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';

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
  registerActors(runtime, {
    catalog,
    transport: await unreachableRelay(),
    receiptKeys: new ReceiptKeys(catalog),
    signers: NO_SIGNERS,
    retrySchedule: [60_000],
    horizonMs: RETENTION_MS,
  });
  await runtime.start();
  runtimes.push(runtime);
  return runtime;
}

/** Stops the runtime, changes the store as `statements` say, and starts again. */
async function restartWith(...statements: string[]): Promise<void> {
  for (const r of runtimes.splice(0)) await r.stop();
  const db = new Database(h.file);
  for (const sql of statements) db.prepare(sql).run();
  db.close();
  await start();
}

const watchDueAt = (id: string) =>
  (h.read((db) => db.prepare("SELECT due_at FROM reminders WHERE name = 'watch' AND actor_id = ?").get(id)) as { due_at: number })
    .due_at;

describe('message retention', () => {
  it('keeps a delivered message 90 days, then removes it, its delivery state and its opens and clicks', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const runtime = await start();
    // A sandbox message is captured; a live one, its relay unreachable, is deferred and so has
    // a delivery state of its own (a sandbox capture keeps none).
    await actor(runtime, messageActor, 'msg_r').admit(admitArgs({ sandbox: true, idempotency_key: 'k' }));
    await actor(runtime, messageActor, 'msg_l').admit(admitArgs({ sandbox: false, idempotency_key: 'l' }));
    const status = (id: string) => (h.stateOnDisk(MESSAGE_ACTOR, id, 'outcomes') as { status: string } | undefined)?.status;
    await eventually(() => status('msg_r') === 'sent' && status('msg_l') === 'deferred');
    expect(h.stateOnDisk(DELIVERY_ACTOR, 'msg_l', 'delivery')).toMatchObject({ attempts: 1, done: false });
    const opened = (message_id: string) => ({
      tenant_id: 'ten_r',
      message_id,
      event: {
        id: `evt_${message_id}`,
        type: 'email.opened' as const,
        created_at: new Date().toISOString(),
        data: { message_id },
      },
    });
    const other = opened('msg_other');
    await catalog.recordEngagement([opened('msg_r'), other]);
    // A delivery outcome moves the watch reminder to the end of retention at once; and a watch
    // that fires for a message with an outcome puts it there.
    const record = h.stateOnDisk(MESSAGE_ACTOR, 'msg_r', 'record') as { created_at: string };
    const retained = Date.parse(record.created_at) + RETENTION_MS;
    expect(watchDueAt('msg_r')).toBe(retained);
    await restartWith("UPDATE reminders SET due_at = 0 WHERE name = 'watch'");
    await eventually(() => watchDueAt('msg_r') > Date.now() && watchDueAt('msg_l') > Date.now());
    expect(watchDueAt('msg_r')).toBe(retained);
    expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_r', 'record')).toBeDefined();

    // Ninety-one days later, as far as the messages and their reminders are concerned.
    const longAgo = new Date(Date.now() - RETENTION_MS - 86_400_000).toISOString();
    await restartWith(
      `UPDATE actor_state SET value = json_set(value, '$.created_at', '${longAgo}') WHERE key = 'record'`,
      "UPDATE reminders SET due_at = 0 WHERE name = 'watch'",
    );
    for (const id of ['msg_r', 'msg_l']) {
      await eventually(() => h.stateOnDisk(MESSAGE_ACTOR, id, 'record') === undefined);
      expect(h.stateOnDisk(MESSAGE_ACTOR, id, 'content')).toBeUndefined();
      expect(h.stateOnDisk(MESSAGE_ACTOR, id, 'outcomes')).toBeUndefined();
    }
    await eventually(() => h.stateOnDisk(DELIVERY_ACTOR, 'msg_l', 'delivery') === undefined);
    await eventually(async () => (await catalog.engagementOf('msg_r')).length === 0);
    expect(await catalog.engagementOf('msg_other')).toEqual([other.event]);
    expect(h.read((db) => db.prepare("SELECT name FROM reminders WHERE actor_id = 'msg_l'").all())).toEqual([]);
  });
});
