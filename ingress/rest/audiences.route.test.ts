// /v1/audiences through Fastify's inject: audiences and contacts, each tenant seeing only its
// own, the CSV import with its report and its whole-file refusal, and who may call them.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';

const ADMIN = 'a'.repeat(40);
let app: TestApp;
const keys = {} as Record<'full' | 'sandbox' | 'other', string>;

const call = (method: string, url: string, key: string, payload?: object | string | Readable, type?: string) =>
  app.server.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${key}`, ...(type ? { 'content-type': type } : {}) },
    ...(payload === undefined ? {} : { payload }),
  });
const errorCode = (res: { json: () => unknown }) => (res.json() as { error: { code: string } }).error.code;

beforeAll(async () => {
  app = await buildApp('audiences', { deps: { adminToken: ADMIN } });
  const issue = async (tenant: string, kind: string) =>
    (
      await app.server.app.inject({
        method: 'POST',
        url: `/v1/admin/tenants/${tenant}/keys`,
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: { kind },
      })
    ).json<{ key: string }>().key;
  const shop = await createTenant(app.catalog, { name: 'shop', default_from: null });
  const other = await createTenant(app.catalog, { name: 'other', default_from: null });
  keys.full = await issue(shop.id, 'live');
  keys.sandbox = await issue(shop.id, 'sandbox');
  keys.other = await issue(other.id, 'live');
});
afterAll(async () => {
  await app.close();
});

async function newAudience(name = 'Newsletter'): Promise<string> {
  const res = await call('POST', '/v1/audiences', keys.full, { name });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string }>().id;
}

describe('audiences and contacts', () => {
  it('creates, lists, gets and deletes an audience; another tenant’s is 404', async () => {
    const id = await newAudience();
    expect(id).toMatch(/^aud_/);
    expect((await call('GET', `/v1/audiences/${id}`, keys.full)).json()).toEqual({
      id,
      name: 'Newsletter',
      contacts: 0,
      created_at: expect.any(String),
    });
    expect((await call('GET', '/v1/audiences', keys.full)).json<{ data: { id: string }[] }>().data.map((a) => a.id)).toContain(
      id,
    );
    for (const [method, url] of [
      ['GET', `/v1/audiences/${id}`],
      ['DELETE', `/v1/audiences/${id}`],
      ['GET', `/v1/audiences/${id}/contacts`],
    ]) {
      const res = await call(method!, url!, keys.other);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(errorCode(res)).toBe('not_found');
    }
    const adding = await call('POST', `/v1/audiences/${id}/contacts`, keys.other, { email: 'a@example.com' });
    expect(adding.statusCode).toBe(404);
    const importing = await call('POST', `/v1/audiences/${id}/contacts/import`, keys.other, 'email\na@example.com\n', 'text/csv');
    expect(importing.statusCode).toBe(404);
    expect((await call('DELETE', `/v1/audiences/${id}`, keys.full)).statusCode).toBe(204);
    expect((await call('GET', `/v1/audiences/${id}`, keys.full)).statusCode).toBe(404);
  });

  it('adds, gets by id or email, updates, pages and removes contacts', async () => {
    const id = await newAudience();
    const added = await call('POST', `/v1/audiences/${id}/contacts`, keys.full, {
      email: 'Ann@Example.com',
      name: 'Ann',
      data: { plan: 'pro' },
    });
    expect(added.statusCode).toBe(201);
    const ann = added.json<{ id: string }>();
    expect(ann).toEqual({
      id: expect.stringMatching(/^con_/),
      audience_id: id,
      email: 'ann@example.com',
      name: 'Ann',
      data: { plan: 'pro' },
      unsubscribed: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const again = await call('POST', `/v1/audiences/${id}/contacts`, keys.full, { email: 'ann@example.com' });
    expect([again.statusCode, errorCode(again)]).toEqual([409, 'contact_exists']);
    const bad = await call('POST', `/v1/audiences/${id}/contacts`, keys.full, { email: 'Ann <ann@example.com>' });
    expect([bad.statusCode, errorCode(bad)]).toEqual([400, 'invalid_request']);

    expect((await call('GET', `/v1/audiences/${id}/contacts/ann@example.com`, keys.full)).json()).toEqual(ann);
    const patched = await call('PATCH', `/v1/audiences/${id}/contacts/${ann.id}`, keys.full, { unsubscribed: true });
    expect(patched.json()).toMatchObject({ id: ann.id, unsubscribed: true });

    for (let i = 0; i < 4; i++) await call('POST', `/v1/audiences/${id}/contacts`, keys.full, { email: `p${i}@example.com` });
    const first = await call('GET', `/v1/audiences/${id}/contacts?limit=3`, keys.full);
    const page = first.json<{ data: unknown[]; next_cursor: string }>();
    expect(page.data).toHaveLength(3);
    const rest = await call('GET', `/v1/audiences/${id}/contacts?limit=3&cursor=${page.next_cursor}`, keys.full);
    expect(rest.json()).toMatchObject({ next_cursor: null });
    expect(rest.json<{ data: unknown[] }>().data).toHaveLength(2);

    expect((await call('DELETE', `/v1/audiences/${id}/contacts/${ann.id}`, keys.full)).statusCode).toBe(204);
    expect((await call('GET', `/v1/audiences/${id}/contacts/${ann.id}`, keys.full)).statusCode).toBe(404);
  });

  it('is for keys that manage: a sandbox key is refused', async () => {
    const res = await call('POST', '/v1/audiences', keys.sandbox, { name: 'x' });
    expect([res.statusCode, errorCode(res)]).toEqual([403, 'insufficient_scope']);
  });
});

describe('CSV import', () => {
  it('streams the body in and answers the report', async () => {
    const id = await newAudience();
    async function* csv() {
      yield 'email,name,city\n';
      for (let i = 0; i < 5000; i++) yield `person${i}@example.com,Person ${i},Oslo\n`;
      yield 'broken-address,Nobody,Rome\n';
    }
    const res = await call('POST', `/v1/audiences/${id}/contacts/import`, keys.full, Readable.from(csv()), 'text/csv');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      added: 5000,
      updated: 0,
      refused_count: 1,
      refused: [{ row: 5002, email: 'broken-address', reason: 'not a valid email address' }],
    });
    expect((await call('GET', `/v1/audiences/${id}`, keys.full)).json()).toMatchObject({ contacts: 5000 });
  });

  it('refuses a file it cannot read with csv_invalid, importing nothing, and a body that is not text/csv', async () => {
    const id = await newAudience();
    const broken = await call(
      'POST',
      `/v1/audiences/${id}/contacts/import`,
      keys.full,
      'email,name\na@example.com,"Ann\n',
      'text/csv',
    );
    expect([broken.statusCode, errorCode(broken)]).toEqual([422, 'csv_invalid']);
    expect((await call('GET', `/v1/audiences/${id}`, keys.full)).json()).toMatchObject({ contacts: 0 });
    const json = await call('POST', `/v1/audiences/${id}/contacts/import`, keys.full, { email: 'a@example.com' });
    expect([json.statusCode, errorCode(json)]).toEqual([400, 'invalid_request']);
  });
});
