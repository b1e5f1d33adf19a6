// MessageActor.admit is the checkpoint: called directly, without the gate in front, it still
// refuses what the gate refuses, and a message it admits carries its retention reminder.
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../dapr/runtime.port.ts';
import { harness, type Harness } from '../../dapr/embedded/runtime.sqlite.testkit.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { MESSAGE_ACTOR, messageActor } from './message.actor.ts';
import { RETENTION_MS, type AdmitArgs } from './message.state.ts';

let h: Harness;
afterEach(() => h.cleanup());

const args = (over: Partial<AdmitArgs> = {}): AdmitArgs => ({
  tenant_id: 'ten_1',
  sandbox: false,
  stream: 'transactional',
  ingress: 'api',
  request_hash: 'h1',
  idempotency_key: null,
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
  ...over,
});

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

  it('keeps the message, and so its idempotency key, for 90 days', async () => {
    const runtime = await start();
    const before = Date.now();
    await actor(runtime, messageActor, 'msg_e').admit(args());
    const row = h.read((db) =>
      db
        .prepare('SELECT due_at FROM reminders WHERE actor_type = ? AND actor_id = ? AND name = ?')
        .get(MESSAGE_ACTOR, 'msg_e', 'expire'),
    ) as { due_at: number };
    expect(row.due_at).toBeGreaterThanOrEqual(before + RETENTION_MS);
    expect(row.due_at).toBeLessThanOrEqual(Date.now() + RETENTION_MS);
  });
});
