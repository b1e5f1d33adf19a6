// MessageActor.admit is the checkpoint: called directly, without the gate in front, it still
// refuses what the gate refuses, and a message nothing came of is handed over again.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../dapr/runtime.port.ts';
import { eventually, harness, type Harness } from '../../dapr/embedded/runtime.sqlite.testkit.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { MESSAGE_ACTOR, MESSAGE_READY, messageActor } from './message.actor.ts';
import type { AdmitArgs } from './message.state.ts';
import { admitArgs } from './message.testkit.ts';

let h: Harness;
afterEach(() => h.cleanup());

const args = admitArgs;

async function start() {
  h = harness();
  return h.start({ actors: [messageActor, recipientActor, tenantActor] });
}

describe('MessageActor.admit, called directly', () => {
  it('refuses invalid content, a suppressed recipient and an exhausted quota, and commits nothing', async () => {
    const runtime = await start();
    const admit = (id: string, a: AdmitArgs) => actor(runtime, messageActor, id).admit(a);
    const bad = args({ content: { ...args().content, to: 'b@example.com\r\nBcc: x@example.com' } });
    await expect(admit('msg_a', bad)).rejects.toMatchObject({ code: 'invalid_request' });

    await actor(runtime, recipientActor, recipientActorId('ten_1', 'b@example.com')).suppress({ reason: 'manual' });
    await expect(admit('msg_b', args())).rejects.toMatchObject({ code: 'recipient_suppressed' });

    const quota = { per_second: null, per_day: 1 };
    await admit('msg_c', args({ quota, content: { ...args().content, to: 'c@example.com' } }));
    await expect(admit('msg_d', args({ quota, content: { ...args().content, to: 'c@example.com' } }))).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    for (const id of ['msg_a', 'msg_b', 'msg_d']) expect(h.stateOnDisk(MESSAGE_ACTOR, id, 'record')).toBeUndefined();
    expect(h.stateOnDisk(MESSAGE_ACTOR, 'msg_c', 'record')).toBeDefined();
  });

  it('hands a queued message over again when nothing came of the first hand-over', async () => {
    const ready: string[] = [];
    h = harness();
    const startWith = () =>
      h.start({
        actors: [messageActor, recipientActor, tenantActor],
        // A consumer that takes the message and never delivers it (it died, say).
        subscribers: { [MESSAGE_READY]: async ({ data }) => void ready.push((data as { message_id: string }).message_id) },
      });
    const runtime = await startWith();
    await actor(runtime, messageActor, 'msg_w').admit(args());
    await eventually(() => ready.length === 1);
    await runtime.stop();
    const db = new Database(h.file);
    db.prepare("UPDATE reminders SET due_at = 0 WHERE name = 'watch'").run();
    db.close();
    await startWith();
    await eventually(() => ready.length === 2);
    expect(ready).toEqual(['msg_w', 'msg_w']);
  });
});
