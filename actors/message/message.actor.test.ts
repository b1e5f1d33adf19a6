// MessageActor.admit is the checkpoint: called directly, without the gate in front, it still
// refuses what the gate refuses (the quota included), takes no quota for a send it does not make,
// and hands over again a message nothing came of.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { MESSAGE_ACTOR, MESSAGE_READY, messageActor } from './message.actor.ts';
import type { AdmitArgs, MessageReady, MessageRecord } from './message.state.ts';
import { timelineOf } from '../../events/email.event.ts';
import { admitArgs, attemptOutcome } from './message.testkit.ts';

let h: Harness;
afterEach(() => h.cleanup());

const args = admitArgs;

async function start() {
  h = harness();
  return h.start({ actors: [messageActor, recipientActor, tenantActor] });
}

describe('MessageActor.admit, called directly', () => {
  it('refuses invalid content, a suppressed recipient and a send over the quota, and commits nothing', async () => {
    const runtime = await start();
    const admit = (id: string, a: AdmitArgs) => actor(runtime, messageActor, id).admit(a);
    const bad = args({ content: { ...args().content, to: 'b@example.com\r\nBcc: x@example.com' } });
    await expect(admit('msg_a', bad)).rejects.toMatchObject({ code: 'invalid_request' });

    await actor(runtime, recipientActor, recipientActorId('ten_1', 'b@example.com')).suppress({ reason: 'manual' });
    await expect(admit('msg_b', args())).rejects.toMatchObject({ code: 'recipient_suppressed' });

    const oneADay = { per_second: null, per_day: 1 };
    const toC = { ...args().content, to: 'c@example.com' };
    await admit('msg_c', args({ quota_limits: oneADay, content: toC }));
    await expect(admit('msg_d', args({ quota_limits: oneADay, content: toC }))).rejects.toMatchObject({
      code: 'quota_exceeded',
      retryAfter: expect.any(Number),
    });
    for (const id of ['msg_a', 'msg_b', 'msg_d']) expect(h.stateOnDisk(MESSAGE_ACTOR, id, 'record')).toBeUndefined();
    expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_c', 'record')).toBeDefined();
  });

  it('takes a send from the quota only when it makes a message: not for a refusal, not for a replay', async () => {
    const runtime = await start();
    const quota_limits = { per_second: null, per_day: 5 };
    const admit = (id: string, a: AdmitArgs) => actor(runtime, messageActor, id).admit({ ...a, quota_limits });
    const dayCount = () => (h.stateOnDisk('TenantActor', 'ten_1', 'quota') as { day_count: number }).day_count;

    await admit('msg_a', args());
    expect(dayCount()).toBe(1);
    // The same message again (a client's retry): a replay, and nothing more taken.
    await expect(admit('msg_a', args())).resolves.toMatchObject({ replayed: true });
    expect(dayCount()).toBe(1);
    // Refused by content policy, then by a suppression: nothing sent, nothing counted.
    await expect(admit('msg_b', args({ content: { ...args().content, to: 'not an address' } }))).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(dayCount()).toBe(1);
    await actor(runtime, recipientActor, recipientActorId('ten_1', 'b@example.com')).suppress({ reason: 'manual' });
    await expect(admit('msg_c', args())).rejects.toMatchObject({ code: 'recipient_suppressed' });
    expect(dayCount()).toBe(1);
  });

  it('answers no send of the other mode as a replay: a sandbox send is never a live one', async () => {
    const runtime = await start();
    const message = actor(runtime, messageActor, 'msg_mode');
    await message.admit(args({ sandbox: true }));
    await expect(message.admit(args({ sandbox: false }))).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    await expect(message.admit(args({ sandbox: true }))).resolves.toMatchObject({ replayed: true });
  });

  it('on the embedded runtime sets no watchdog at a sandbox hand-over: the outbox hands it over until the subscriber returns', async () => {
    const ready: string[] = [];
    h = harness();
    const runtime = await h.start({
      actors: [messageActor, recipientActor, tenantActor],
      // A consumer that fails on its first try (it died, say), then takes the message.
      subscribers: {
        [MESSAGE_READY]: async ({ data }) => {
          ready.push((data as MessageReady).message_id);
          if (ready.length === 1) throw new Error('consumer died');
        },
      },
    });
    await actor(runtime, messageActor, 'msg_w').admit(args({ sandbox: true }));
    await eventually(() => ready.length === 2, 10_000);
    expect(ready).toEqual(['msg_w', 'msg_w']);
    const watch = h.read((db) => db.prepare("SELECT * FROM reminders WHERE actor_id = 'msg_w' AND name = 'watch'").all());
    expect(watch).toEqual([]);
  });

  it('hands a queued message over again when its watchdog fires with nothing come of the first hand-over', async () => {
    // Where a broker delivers (Dapr's pub/sub) the hand-over sets the watchdog; here it is set on
    // disk, as that runtime would have, for a consumer that took the message and never delivered it.
    const ready: string[] = [];
    h = harness();
    const startWith = () =>
      h.start({
        actors: [messageActor, recipientActor, tenantActor],
        subscribers: { [MESSAGE_READY]: async ({ data }) => void ready.push((data as MessageReady).message_id) },
      });
    const runtime = await startWith();
    await actor(runtime, messageActor, 'msg_w').admit(args());
    await eventually(() => ready.length === 1);
    await runtime.stop();
    const db = new Database(h.file);
    db.prepare("INSERT OR REPLACE INTO reminders (actor_type, actor_id, name, due_at) VALUES (?, 'msg_w', 'watch', 0)").run(
      MESSAGE_ACTOR,
    );
    db.close();
    await startWith();
    await eventually(() => ready.length === 2);
    expect(ready).toEqual(['msg_w', 'msg_w']);
  });

  it('keeps the message id out of its stored events and puts it in every envelope', async () => {
    const runtime = await start();
    const { response } = await actor(runtime, messageActor, 'msg_s').admit(args());
    const stored = h.stateOnDisk(MESSAGE_ACTOR, 'msg_s', 'record') as MessageRecord;
    expect(stored.events.map((e) => e.data.message_id)).toEqual([undefined, undefined]);
    expect(response).toMatchObject({ id: 'msg_s', status: 'queued', to: 'b@example.com', sandbox: false });
    expect(timelineOf(stored).map((e) => [e.type, e.data.message_id])).toEqual([
      ['message.accepted', 'msg_s'],
      ['message.queued', 'msg_s'],
    ]);
  });

  it('records outcomes apart from the record: the record is not rewritten, the timeline shows both', async () => {
    const runtime = await start();
    const message = actor(runtime, messageActor, 'msg_t');
    await message.admit(args());
    const admitted = h.stateOnDisk(MESSAGE_ACTOR, 'msg_t', 'record');
    const deferred = attemptOutcome({ attempt: 1, result: 'deferred', smtp_code: 451, response: '451 later' });
    await message.recordAttempt(deferred);
    await message.recordAttempt(deferred); // told twice: recorded once
    await message.recordAttempt(attemptOutcome({ attempt: 2, result: 'sent', smtp_code: 250, response: '250 ok' }));
    expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_t', 'record')).toEqual(admitted);
    expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_t', 'outcomes')).toMatchObject({ status: 'sent', to: 'b@example.com' });
    const { record } = await message.get(undefined);
    expect(record.status).toBe('sent');
    expect(timelineOf(record).map((e) => [e.type, e.data.attempt])).toEqual([
      ['message.accepted', undefined],
      ['message.queued', undefined],
      ['message.deferred', 1],
      ['email.sent', 2],
    ]);
  });
});
