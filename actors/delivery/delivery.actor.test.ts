// captureSandbox, a sandbox message's hand-over: from a publication that carries the capture's
// fields (only the content is read) and from one made before it did (the record is read).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { messageActor } from '../message/message.actor.ts';
import { timelineOf } from '../message/message.state.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { captureSandbox } from './delivery.actor.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  await catalog.close();
  await h.cleanup();
});

describe('captureSandbox', () => {
  it('captures once from either form of the hand-over, and puts the capture on the timeline once', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor] });
    for (const id of ['msg_new', 'msg_old']) await actor(runtime, messageActor, id).admit(admitArgs({ sandbox: true }));
    const current = { message_id: 'msg_new', sandbox: true, tenant_id: 'ten_1', message_id_header: '<msg_new@sender.example>' };
    const earlier = { message_id: 'msg_old', sandbox: true };

    expect(await captureSandbox(runtime, catalog, current)).toBe('captured');
    expect(await captureSandbox(runtime, catalog, earlier)).toBe('captured');
    // Delivered again (publication is at least once): the inbox and the timeline keep one capture each.
    await captureSandbox(runtime, catalog, current);
    expect(await captureSandbox(runtime, catalog, earlier)).toBe('skipped');

    const inbox = await catalog.listCaptures('ten_1', { limit: 10 });
    expect(inbox.data.map((c) => [c.message_id, c.headers['Message-ID'], c.subject]).sort()).toEqual([
      ['msg_new', '<msg_new@sender.example>', 's'],
      ['msg_old', '<msg_old@sender.example>', 's'],
    ]);
    for (const id of ['msg_new', 'msg_old']) {
      const { record } = await actor(runtime, messageActor, id).get(undefined);
      expect(record.status).toBe('sent');
      expect(timelineOf(record).filter((e) => e.type === 'email.sent')).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ message_id: id, sandbox: true, attempt: 1 }) }),
      ]);
    }
  });

  it('skips a message that is gone', async () => {
    h = harness();
    catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor] });
    const ready = { message_id: 'msg_gone', sandbox: true, tenant_id: 'ten_1', message_id_header: '<msg_gone@sender.example>' };
    expect(await captureSandbox(runtime, catalog, ready)).toBe('skipped');
    expect(await captureSandbox(runtime, catalog, { message_id: 'msg_gone', sandbox: true })).toBe('skipped');
    expect((await catalog.listCaptures('ten_1', { limit: 10 })).data).toEqual([]);
  });
});
