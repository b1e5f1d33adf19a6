// GET /v1/events through Fastify's inject: the feed a key may read (a sandbox key: its sandbox
// messages' events only; a sending_access key: none), long polling, and refused queries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';

const ADMIN = 'a'.repeat(40);
let app: TestApp;
let tenantId: string;
const keys = {} as Record<'full' | 'sending' | 'sandbox', string>;

beforeAll(async () => {
  app = await buildApp('events', { actors: true, deps: { adminToken: ADMIN } });
  const tenant = await createTenant(app.catalog, { name: 'shop', default_from: 'shop@sender.example' });
  tenantId = tenant.id;
  const issue = async (body: object) =>
    (
      await app.server.app.inject({
        method: 'POST',
        url: `/v1/admin/tenants/${tenant.id}/keys`,
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: body,
      })
    ).json<{ key: string }>().key;
  keys.full = await issue({ kind: 'live' });
  keys.sending = await issue({ kind: 'live', scope: 'sending_access' });
  keys.sandbox = await issue({ kind: 'sandbox' });
});
afterAll(() => app.close());

const events = (key: string, query = '') =>
  app.server.app.inject({ method: 'GET', url: `/v1/events${query}`, headers: { authorization: `Bearer ${key}` } });

describe('GET /v1/events', () => {
  it('holds a read open until the sandbox send it waits for is captured, and answers its email.sent', async () => {
    const { cursor, data } = (await events(keys.sandbox)).json();
    expect(data).toEqual([]);
    const waiting = events(keys.sandbox, `?after=${cursor}&wait=20`);
    const sent = await app.server.app.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${keys.sandbox}` },
      payload: { to: 'ann@example.com', subject: 'Hi', html: '<p>hi</p>' },
    });
    expect(sent.statusCode).toBe(202);
    const page = (await waiting).json();
    expect(page.data).toEqual([
      expect.objectContaining({ type: 'email.sent', data: expect.objectContaining({ message_id: sent.json().id }) }),
    ]);
  });

  it("shows a live message's events to a full key, never to a sandbox key", async () => {
    const from = {
      full: (await events(keys.full)).json().cursor,
      sandbox: (await events(keys.sandbox)).json().cursor,
    };
    const live = {
      id: 'evt_live',
      type: 'email.bounced' as const,
      created_at: new Date().toISOString(),
      data: { message_id: 'msg_live' },
    };
    app.events!.push(tenantId, live);
    expect((await events(keys.full, `?after=${from.full}`)).json().data).toEqual([live]);
    const sandboxPage = (await events(keys.sandbox, `?after=${from.sandbox}`)).json();
    expect(sandboxPage.data).toEqual([]);
    expect(sandboxPage.cursor).not.toBe(from.sandbox);
  });

  it('refuses a sending_access key, a cursor it did not give and a wait over 25 s', async () => {
    const sending = await events(keys.sending);
    expect(sending.statusCode).toBe(403);
    expect(sending.json().error.code).toBe('insufficient_scope');
    for (const query of ['?after=nope', '?wait=26', '?limit=0']) {
      const res = await events(keys.full, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code).toBe('invalid_request');
    }
  });
});
