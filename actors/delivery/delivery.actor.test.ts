// captureSandbox, a sandbox message's hand-over: from the publication the message actor made, it
// captures once, and puts the capture on the timeline once (unsigned, and why, when its From domain
// has no keys: the signed capture is in test/e2e/mta.e2e.test.ts).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { MESSAGE_READY, messageActor } from '../message/message.actor.ts';
import type { MessageReady } from '../message/message.state.ts';
import { timelineOf } from '../../events/email.event.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { captureSandbox } from './delivery.actor.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  await catalog.close();
  await h.cleanup();
});

describe('captureSandbox', () => {
  it('captures once from the hand-over, however often it is delivered, and puts the capture on the timeline once', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const published: MessageReady[] = [];
    const runtime = await h.start({
      actors: [messageActor, recipientActor, tenantActor],
      subscribers: { [MESSAGE_READY]: async ({ data }) => void published.push(data as MessageReady) },
    });
    await actor(runtime, messageActor, 'msg_s').admit(admitArgs({ sandbox: true }));
    await eventually(() => expect(published).toHaveLength(1));
    const ready = published[0]!;
    expect(ready).toEqual({ message_id: 'msg_s', sandbox: true });

    expect(await captureSandbox(runtime, catalog, ready, { signers: NO_SIGNERS })).toBe('captured');
    // Delivered again (publication is at least once): the inbox and the timeline keep one capture each.
    await captureSandbox(runtime, catalog, ready, { signers: NO_SIGNERS });

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
  });

  it('skips a message that is gone', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor] });
    const ready: MessageReady = { message_id: 'msg_gone', sandbox: true };
    expect(await captureSandbox(runtime, catalog, ready, { signers: NO_SIGNERS })).toBe('skipped');
    expect((await catalog.listCaptures('ten_1', { limit: 10 })).data).toEqual([]);
  });
});
