// BatchActor: two-phase commit with presumed abort. Messages are admitted held under an attempt
// (prepare); the batch's one decision commits or aborts them all; a held message whose batch
// never told it asks on its watchdog, and an attempt still open then is aborted.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { MESSAGE_ACTOR, MESSAGE_READY, messageActor } from '../message/message.actor.ts';
import type { BatchHold, MessageReady } from '../message/message.state.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { BATCH_ACTOR, batchActor } from './batch.actor.ts';

let h: Harness;
afterEach(() => h.cleanup());

async function start() {
  h = harness();
  const ready: string[] = [];
  const startRuntime = () =>
    h.start({
      actors: [messageActor, recipientActor, tenantActor, batchActor],
      subscribers: { [MESSAGE_READY]: async ({ data }) => void ready.push((data as MessageReady).message_id) },
    });
  const runtime = await startRuntime();
  return { runtime, ready, startRuntime };
}

type Runtime = Awaited<ReturnType<typeof start>>['runtime'];

/** Prepares message `id` of a batch: admitted, held under `hold`. */
const admitHeld = (runtime: Runtime, id: string, hold: BatchHold) =>
  actor(runtime, messageActor, id).admit(
    admitArgs({ request_hash: id, content: { ...admitArgs().content, to: `${id}@example.com` }, hold }),
  );

const statusOf = async (runtime: Runtime, id: string) => (await actor(runtime, messageActor, id).get(undefined)).record.status;
const batchOnDisk = (id: string) => h.stateOnDisk(BATCH_ACTOR, id, 'batch') as { attempt: number; outcome: string } | undefined;

/** Makes every pending 'watch' reminder due now, as if its 30 seconds had passed while stopped. */
function fireWatchdogs() {
  const db = new Database(h.file);
  db.prepare("UPDATE reminders SET due_at = 0 WHERE name = 'watch'").run();
  db.close();
}

describe('BatchActor', () => {
  it('prepares held messages that wait for the commit, then commits them all', async () => {
    const { runtime, ready } = await start();
    const batch = actor(runtime, batchActor, 'bat_1');
    const { attempt, committed } = await batch.begin({ request_hash: 'r1' });
    expect({ attempt, committed }).toEqual({ attempt: 1, committed: false });
    const hold = { batch_id: 'bat_1', attempt };
    for (const id of ['msg_a', 'msg_b']) await admitHeld(runtime, id, hold);
    expect([await statusOf(runtime, 'msg_a'), await statusOf(runtime, 'msg_b')]).toEqual(['held', 'held']);

    await batch.commit({ attempt });
    expect(batchOnDisk('bat_1')).toMatchObject({ attempt: 1, outcome: 'committed' });
    // Committing twice is the same commit.
    await batch.commit({ attempt });
    for (const id of ['msg_a', 'msg_b']) await actor(runtime, messageActor, id).settle({ hold, outcome: 'committed' });
    await eventually(() => expect([...ready].sort()).toEqual(['msg_a', 'msg_b']));
    expect(await statusOf(runtime, 'msg_a')).toBe('queued');
  });

  it('aborts an open attempt: it can no longer commit, and its held messages are rolled back as if never admitted', async () => {
    const { runtime } = await start();
    const batch = actor(runtime, batchActor, 'bat_2');
    const { attempt } = await batch.begin(undefined);
    const hold = { batch_id: 'bat_2', attempt };
    await admitHeld(runtime, 'msg_c', hold);

    expect(await batch.resolve({ attempt })).toBe('aborted');
    await expect(batch.commit({ attempt })).rejects.toMatchObject({ code: 'idempotency_key_in_flight' });
    await actor(runtime, messageActor, 'msg_c').settle({ hold, outcome: 'aborted' });
    await expect(actor(runtime, messageActor, 'msg_c').get(undefined)).rejects.toMatchObject({ code: 'not_found' });
    expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_c', 'record')).toBeUndefined();
    // Its idempotency key is free again: the same message is admitted anew, not answered as a replay.
    await expect(actor(runtime, messageActor, 'msg_c').admit(admitArgs())).resolves.toMatchObject({ replayed: false });
  });

  it('presumes abort after a crash between the phases: the held message asks on its watchdog and is rolled back', async () => {
    const { runtime, ready, startRuntime } = await start();
    const { attempt } = await actor(runtime, batchActor, 'bat_3').begin(undefined);
    await admitHeld(runtime, 'msg_d', { batch_id: 'bat_3', attempt });
    await runtime.stop();
    fireWatchdogs();
    const restarted = await startRuntime();
    await eventually(() => expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_d', 'record')).toBeUndefined());
    expect(batchOnDisk('bat_3')).toMatchObject({ attempt, outcome: 'aborted' });
    // A gate that came back could no longer commit what was rolled back.
    await expect(actor(restarted, batchActor, 'bat_3').commit({ attempt })).rejects.toMatchObject({
      code: 'idempotency_key_in_flight',
    });
    expect(ready).toEqual([]);
  });

  it('sends what committed before a crash cut the second phase short, on the held message’s watchdog', async () => {
    const { runtime, ready, startRuntime } = await start();
    const batch = actor(runtime, batchActor, 'bat_4');
    const { attempt } = await batch.begin(undefined);
    await admitHeld(runtime, 'msg_e', { batch_id: 'bat_4', attempt });
    await batch.commit({ attempt });
    await runtime.stop();
    fireWatchdogs();
    await startRuntime();
    await eventually(() => expect(ready).toEqual(['msg_e']));
  });

  it('answers a replay of a committed batch as committed, and refuses another request under its key', async () => {
    const { runtime } = await start();
    const batch = actor(runtime, batchActor, 'bat_5');
    const { attempt } = await batch.begin({ request_hash: 'r5' });
    await batch.commit({ attempt });
    expect(await batch.begin({ request_hash: 'r5' })).toEqual({ attempt, committed: true });
    await expect(batch.begin({ request_hash: 'other' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('lets another request take the key of a batch that was rolled back', async () => {
    const { runtime } = await start();
    const batch = actor(runtime, batchActor, 'bat_6');
    const first = await batch.begin({ request_hash: 'r6' });
    await batch.resolve({ attempt: first.attempt });
    expect(await batch.begin({ request_hash: 'other' })).toEqual({ attempt: first.attempt + 1, committed: false });
  });

  it('lets a retry’s new attempt take over the held messages of the open one it replaces', async () => {
    const { runtime, ready } = await start();
    const batch = actor(runtime, batchActor, 'bat_7');
    const first = await batch.begin({ request_hash: 'r7' });
    await admitHeld(runtime, 'msg_f', { batch_id: 'bat_7', attempt: first.attempt });
    const retry = await batch.begin({ request_hash: 'r7' });
    expect(retry).toEqual({ attempt: first.attempt + 1, committed: false });
    // The first attempt can no longer commit, and its late word is not the message's.
    await expect(batch.commit({ attempt: first.attempt })).rejects.toMatchObject({ code: 'idempotency_key_in_flight' });
    expect(await batch.resolve({ attempt: first.attempt })).toBe('aborted');
    const hold = { batch_id: 'bat_7', attempt: retry.attempt };
    await expect(admitHeld(runtime, 'msg_f', hold)).resolves.toMatchObject({ replayed: false });
    await actor(runtime, messageActor, 'msg_f').settle({ hold: { ...hold, attempt: first.attempt }, outcome: 'aborted' });
    expect(await statusOf(runtime, 'msg_f')).toBe('held');

    await batch.commit({ attempt: retry.attempt });
    await actor(runtime, messageActor, 'msg_f').settle({ hold, outcome: 'committed' });
    await eventually(() => expect(ready).toEqual(['msg_f']));
  });

  it('answers aborted for a batch it has no record of: nothing was committed', async () => {
    const { runtime } = await start();
    expect(await actor(runtime, batchActor, 'bat_none').resolve({ attempt: 1 })).toBe('aborted');
  });
});
