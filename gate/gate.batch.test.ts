// All-or-nothing admission (spec part 4 rule 4): a batch whose admission fails part-way, or whose
// gate dies before deciding, rolls back every message; a retry with the same key sends each once.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../runtime/embedded/runtime.sqlite.testkit.ts';
import { BATCH_ACTOR, batchActor } from '../actors/batch/batch.actor.ts';
import { derivedId } from '../lib/ids.ts';
import { MESSAGE_ACTOR, MESSAGE_READY, messageActor } from '../actors/message/message.actor.ts';
import { recipientActor, recipientActorId } from '../actors/recipient/recipient.actor.ts';
import { tenantActor } from '../actors/tenant/tenant.actor.ts';
import type { MessageReady } from '../actors/message/message.state.ts';
import { admitArgs } from '../actors/message/message.testkit.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { createGate, type BatchItem, type Sender } from './gate.ts';
import { senderWith } from './gate.testkit.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  catalog?.close();
  await h.cleanup();
});

const sender = senderWith();

const items = (n: number): BatchItem[] =>
  Array.from({ length: n }, (_, i) => ({
    draft: { to: `r${i}@example.com`, subject: `s${i}`, html: '<p>h</p>' },
    idempotencyKey: `k:${i}`,
  }));

async function start() {
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.sqlite'));
  const ready: string[] = [];
  const startRuntime = () =>
    h.start({
      actors: [messageActor, recipientActor, tenantActor, batchActor],
      subscribers: { [MESSAGE_READY]: async ({ data }) => void ready.push((data as MessageReady).message_id) },
    });
  return { runtime: await startRuntime(), ready, startRuntime };
}

/** An invoker whose `nth` admit call fails as a store would: not a refusal, an outage. */
function failingAt(invoker: Invoker, nth: number): Invoker {
  let admits = 0;
  return {
    invoke: (type, id, method, args) =>
      method === 'admit' && admits++ === nth
        ? Promise.reject(new Error('state store unavailable'))
        : invoker.invoke(type, id, method, args),
  };
}

const messagesOnDisk = () =>
  h.read((db) => db.prepare("SELECT actor_id FROM actor_state WHERE actor_type = ? AND key = 'record'").all(MESSAGE_ACTOR))
    .length;

/** Makes every pending 'watch' reminder due now, as if its 30 seconds had passed. */
function fireWatchdogs() {
  const db = new Database(h.file);
  db.prepare("UPDATE reminders SET due_at = 0 WHERE name = 'watch'").run();
  db.close();
}

describe('Gate.admitAll', () => {
  it('rolls every message back when one admission fails part-way, and a retry sends each once', async () => {
    const { runtime, ready } = await start();
    const broken = createGate({ invoker: failingAt(runtime, 3), catalog, senders: null });
    await expect(
      broken.admitAll({ sender, ingress: 'style_p', items: items(6), batchKey: 'k', refusals: 'per_item' }),
    ).rejects.toThrow('state store unavailable');
    expect(messagesOnDisk()).toBe(0);

    const gate = createGate({ invoker: runtime, catalog, senders: null });
    const results = await gate.admitAll({ sender, ingress: 'style_p', items: items(6), batchKey: 'k', refusals: 'per_item' });
    expect(results.map((r) => ('ok' in r ? r.ok.replayed : r.refused.code))).toEqual([false, false, false, false, false, false]);
    await eventually(() => ready.length === 6);
    // The same request again: the whole batch is a replay, and nothing more is handed over.
    const again = await gate.admitAll({ sender, ingress: 'style_p', items: items(6), batchKey: 'k', refusals: 'per_item' });
    expect(again.every((r) => 'ok' in r && r.ok.replayed)).toBe(true);
    // A later message is handed over: one the replay had published before it would have been too.
    const [later] = await gate.admitAll({
      sender,
      ingress: 'style_p',
      items: [items(7)[6]!],
      batchKey: 'later',
      refusals: 'per_item',
    });
    const laterId = later && 'ok' in later ? later.ok.response.id : '';
    await eventually(() => ready.includes(laterId));
    expect(new Set(ready).size).toBe(7);
    expect(ready.length).toBe(7);
  });

  it('answers a policy refusal per item, or refuses the whole request, as asked', async () => {
    const { runtime, ready } = await start();
    await actor(runtime, recipientActor, recipientActorId('ten_1', 'r2@example.com')).suppress({ reason: 'manual' });
    const gate = createGate({ invoker: runtime, catalog, senders: null });

    const all = gate.admitAll({ sender, ingress: 'smtp', items: items(4), refusals: 'all' });
    // The refusal names the item at fault, so an ingress can point at the recipient.
    await expect(all).rejects.toMatchObject({ code: 'recipient_suppressed', item: 2 });
    expect(messagesOnDisk()).toBe(0);

    const perItem = await gate.admitAll({ sender, ingress: 'style_p', items: items(4), refusals: 'per_item' });
    expect(perItem.map((r) => ('ok' in r ? r.ok.response.to : r.refused.code))).toEqual([
      'r0@example.com',
      'r1@example.com',
      'recipient_suppressed',
      'r3@example.com',
    ]);
    await eventually(() => ready.length === 3);
    expect(messagesOnDisk()).toBe(3);
  });

  it('keeps a sandbox batch and a live one under the same key apart: neither replays the other', async () => {
    const { runtime, ready } = await start();
    const gate = createGate({ invoker: runtime, catalog, senders: null });
    const sandboxSender: Sender = { ...sender, key: { ...sender.key, kind: 'sandbox', sandbox: true } };
    const captured = await gate.admitAll({
      sender: sandboxSender,
      ingress: 'style_p',
      items: items(2),
      batchKey: 'm',
      refusals: 'per_item',
    });
    const live = await gate.admitAll({ sender, ingress: 'style_p', items: items(2), batchKey: 'm', refusals: 'per_item' });
    const answers = (results: typeof live) =>
      results.map((r) => ('ok' in r ? [r.ok.replayed, r.ok.response.sandbox] : r.refused.code));
    expect(answers(captured)).toEqual([
      [false, true],
      [false, true],
    ]);
    expect(answers(live)).toEqual([
      [false, false],
      [false, false],
    ]);
    await eventually(() => new Set(ready).size === 4);
  });

  it('rolls back a batch whose gate died before deciding, on the held messages’ watchdog', async () => {
    const { runtime, ready, startRuntime } = await start();
    // What a gate that crashes after the admissions and before the commit leaves behind.
    const { attempt } = await actor(runtime, batchActor, 'bat_x').begin(undefined);
    for (const [i, item] of items(3).entries()) {
      const id = `msg_held${i}`;
      // Held admissions are the gate's to make; this test stands in for a gate cut short.
      const base = admitArgs();
      await actor(runtime, messageActor, id).admit({
        ...base,
        ingress: 'style_p',
        request_hash: `h${i}`,
        content: { ...base.content, to: item.draft.to! },
        hold: { batch_id: 'bat_x', attempt },
      });
    }
    expect(messagesOnDisk()).toBe(3);
    await runtime.stop();
    fireWatchdogs();
    const restarted = await startRuntime();
    await eventually(() => messagesOnDisk() === 0);
    expect(ready).toEqual([]);
    // The gate, had it lived, could no longer commit what was rolled back.
    await expect(actor(restarted, batchActor, 'bat_x').commit({ attempt })).rejects.toMatchObject({
      code: 'idempotency_key_in_flight',
    });
  });

  it('sends a batch that committed before the gate could release it, on the watchdog', async () => {
    const { runtime, ready, startRuntime } = await start();
    // A gate that dies right after the commit point: no message is told the outcome.
    const silent: Invoker = {
      invoke: (type, id, method, args) =>
        method === 'settle' ? new Promise(() => undefined) : runtime.invoke(type, id, method, args),
    };
    const cut = createGate({ invoker: silent, catalog, senders: null });
    void cut.admitAll({ sender, ingress: 'style_p', items: items(3), batchKey: 'b', refusals: 'per_item' });
    await eventually(() => messagesOnDisk() === 3);
    const batchId = derivedId('bat', 'ten_1', 'live', 'b');
    await eventually(() => (h.stateOnDisk(BATCH_ACTOR, batchId, 'batch') as { outcome?: string })?.outcome === 'committed');
    expect(ready).toEqual([]);
    await runtime.stop();
    fireWatchdogs();
    await startRuntime();
    await eventually(() => ready.length === 3);
  });
});
