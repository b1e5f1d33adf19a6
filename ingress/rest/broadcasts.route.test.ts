// /v1/broadcasts through Fastify's inject, on an in-process Gatepost with its actors: a draft made,
// listed, sent and fanned out by its actor (sandbox: captured), each tenant seeing only its own,
// and every refusal coded, leaving the draft as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { eventually } from '../../test/harness/gatepost.harness.ts';

const ADMIN = 'a'.repeat(40);
let app: TestApp;
const keys = {} as Record<'full' | 'other', string>;

const call = async (method: string, url: string, payload?: object, key = keys.full) => {
  const res = await app.server.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${key}` },
    ...(payload === undefined ? {} : { payload }),
  });
  const body = res.body ? res.json() : null;
  return { status: res.statusCode, body, code: body?.error?.code as string | undefined };
};

beforeAll(async () => {
  app = await buildApp('broadcasts', { actors: true, relay: true, deps: { adminToken: ADMIN } });
  const issue = async (tenant: string) =>
    (
      await app.server.app.inject({
        method: 'POST',
        url: `/v1/admin/tenants/${tenant}/keys`,
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: { kind: 'live' },
      })
    ).json<{ key: string }>().key;
  keys.full = await issue((await createTenant(app.catalog, { name: 'shop', default_from: null })).id);
  keys.other = await issue((await createTenant(app.catalog, { name: 'other', default_from: null })).id);
});
afterAll(async () => {
  await app.close();
});

async function audience(emails: string[]): Promise<string> {
  const { body } = await call('POST', '/v1/audiences', { name: 'Readers' });
  for (const email of emails) expect((await call('POST', `/v1/audiences/${body.id}/contacts`, { email })).status).toBe(201);
  return body.id;
}

const draftOf = (audience_id: string) => ({
  name: 'News',
  audience_id,
  from: 'News <news@shop.example>',
  subject: 'Hi {{email}}',
  html: '<p>{{email}}</p>',
  sandbox: true,
});

describe('/v1/broadcasts', () => {
  it('drafts, lists, sends and fans a sandbox broadcast out to the captures', async () => {
    const emails = Array.from({ length: 7 }, (_, i) => `r${i}@example.com`);
    const made = await call('POST', '/v1/broadcasts', draftOf(await audience(emails)));
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ status: 'draft', sandbox: true, paused: null, progress: null, results: null });
    expect((await call('GET', '/v1/broadcasts')).body.data.map((b: { id: string }) => b.id)).toContain(made.body.id);
    expect((await call('GET', '/v1/broadcasts', undefined, keys.other)).body.data).toEqual([]);

    const sent = await call('POST', `/v1/broadcasts/${made.body.id}/send`);
    expect(sent.status).toBe(200);
    const done = await eventually(async () => {
      const b = (await call('GET', `/v1/broadcasts/${made.body.id}`)).body;
      return b.status === 'sent' && b.results.sent === emails.length && b;
    });
    expect(done.progress).toMatchObject({ admitted: emails.length, refused: { suppressed: 0, unsubscribed: 0, other: 0 } });
    // Captured, one per contact, never delivered.
    const tenantId = (await app.keys.resolve(keys.full)).tenant.id;
    const captured = (await app.catalog.listCaptures(tenantId, { limit: 100 })).data;
    expect(captured.map((c) => c.to).sort()).toEqual(emails);
    expect(captured.map((c) => c.subject).sort()).toEqual(emails.map((e) => `Hi ${e}`));
  });

  it('refuses a send without a body only for what the draft lacks', async () => {
    const id = (await call('POST', '/v1/broadcasts', draftOf(await audience([])))).body.id;
    const refused = await call('POST', `/v1/broadcasts/${id}/send`);
    expect([refused.status, refused.code]).toEqual([422, 'audience_empty']);
  });
});
