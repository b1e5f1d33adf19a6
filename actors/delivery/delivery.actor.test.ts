// A sandbox message's hand-over (MessageActor.captureSandbox with sandboxCapture): from the
// publication the message actor made, it captures once, and puts the capture on the timeline once
// (unsigned, and why, when its From domain has no keys: the signed capture is in
// test/e2e/mta.e2e.test.ts); a capture the inbox refused leaves the timeline as it was.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { MESSAGE_READY, messageActor, messageActorWith } from '../message/message.actor.ts';
import type { MessageReady } from '../message/message.state.ts';
import { EMAIL_EVENTS, timelineOf, type EmailEvent } from '../../events/email.event.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { sandboxCapture } from './delivery.actor.ts';
import { NO_INDEX } from '../recipient/suppression.index.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  await catalog.close();
  await h.cleanup();
});

/** The message actor as a host registers it, capturing into `catalog`. */
const capturing = (into: SqliteCatalog) =>
  messageActorWith({ suppressions: NO_INDEX, tally: null, capture: sandboxCapture(into, { signers: NO_SIGNERS }) });
const capture = (runtime: Parameters<typeof actor>[0], ready: MessageReady) =>
  actor(runtime, messageActor, ready.message_id).captureSandbox(undefined);

describe('captureSandbox', () => {
  it('captures once from the hand-over, however often it is delivered, puts the capture on the timeline once, and publishes its event each time', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const published: MessageReady[] = [];
    const events: EmailEvent[] = [];
    const runtime = await h.start({
      actors: [capturing(catalog), recipientActor, tenantActor],
      subscribers: {
        [MESSAGE_READY]: async ({ data }) => void published.push(data as MessageReady),
        [EMAIL_EVENTS]: async ({ data }) => void events.push(data as EmailEvent),
      },
    });
    await actor(runtime, messageActor, 'msg_s').admit(admitArgs({ sandbox: true }));
    await eventually(() => expect(published).toHaveLength(1));
    const ready = published[0]!;
    expect(ready).toEqual({ message_id: 'msg_s', sandbox: true, tenant_id: 'ten_1', queued_at: expect.any(Number) });

    expect(await capture(runtime, ready)).toBe('captured');
    // Delivered again (publication is at least once): the inbox and the timeline keep one capture each.
    expect(await capture(runtime, ready)).toBe('captured');

    const inbox = await catalog.listCaptures('ten_1', { limit: 10 });
    expect(inbox.data.map((c) => [c.message_id, c.headers['Message-ID'], c.subject])).toEqual([
      ['msg_s', '<msg_s@sender.example>', 's'],
    ]);
    // Not from a verified domain of the tenant: captured unsigned, and the timeline says why.
    expect(inbox.data[0]).toMatchObject({ dkim: null, source: null });
    const { record } = await actor(runtime, messageActor, 'msg_s').get(undefined);
    expect(record.status).toBe('sent');
    expect(timelineOf(record).filter((e) => e.type === 'email.sent')).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({
          message_id: 'msg_s',
          sandbox: true,
          attempt: 1,
          response:
            'Captured in the sandbox inbox; not delivered. Unsigned: the From domain is not a verified sending domain of the tenant.',
        }),
      }),
    ]);
    // The second delivery may be there because the first capture's event never went out (on
    // Dapr it is published after the commit, with no outbox): it goes out again, the same event.
    const sent = timelineOf(record).find((e) => e.type === 'email.sent')!;
    await eventually(() =>
      expect(events.map((e) => [e.event.type, e.event.id])).toEqual([
        ['email.sent', sent.id],
        ['email.sent', sent.id],
      ]),
    );
  });

  it('skips a message that is gone', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const runtime = await h.start({ actors: [capturing(catalog), recipientActor, tenantActor] });
    const ready: MessageReady = { message_id: 'msg_gone', sandbox: true, tenant_id: 'ten_1', queued_at: Date.now() };
    expect(await capture(runtime, ready)).toBe('skipped');
    expect((await catalog.listCaptures('ten_1', { limit: 10 })).data).toEqual([]);
  });

  it('saves nothing on the timeline when the inbox cannot take the capture, and captures when tried again', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    let inboxDown = true;
    const flaky = messageActorWith({
      suppressions: NO_INDEX,
      tally: null,
      capture: async (view) => {
        if (inboxDown) throw new Error('the inbox is down');
        return sandboxCapture(catalog, { signers: NO_SIGNERS })(view);
      },
    });
    const runtime = await h.start({ actors: [flaky, recipientActor, tenantActor] });
    await actor(runtime, messageActor, 'msg_f').admit(admitArgs({ sandbox: true }));
    const ready: MessageReady = { message_id: 'msg_f', sandbox: true, tenant_id: 'ten_1', queued_at: Date.now() };
    await expect(capture(runtime, ready)).rejects.toThrow(/inbox is down/);
    const before = await actor(runtime, messageActor, 'msg_f').get(undefined);
    expect(before.record.status).toBe('queued');
    inboxDown = false;
    expect(await capture(runtime, ready)).toBe('captured');
    const after = await actor(runtime, messageActor, 'msg_f').get(undefined);
    expect(after.record.status).toBe('sent');
    expect((await catalog.listCaptures('ten_1', { limit: 10 })).data.map((c) => c.message_id)).toEqual(['msg_f']);
  });
});
