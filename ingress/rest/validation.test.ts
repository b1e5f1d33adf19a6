// A request part a route's schema refuses is answered in the native error body, worded as the
// handlers' own parses word it: `Invalid <part>: <field>: <message>` and one detail per field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { createTenant } from '../../tenancy/tenants.ts';

const ADMIN = 'admin-token';
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await buildApp('validation', { deps: { adminToken: ADMIN } });
  const tenant = await createTenant(app.catalog, { name: 'shop', default_from: 'shop@sender.example' });
  key = (await app.keys.issue(tenant.id, 'live', null, { scope: 'full_access', sandbox: false })).secret;
});
afterAll(() => app.close());

const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  app.server.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) });

describe('a request refused by its route schema', () => {
  it('names an unknown body field itself', async () => {
    const res = await call('POST', '/v1/templates', { slug: 'a', subject: 's', html: 'h', colour: 'red' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: {
        code: 'invalid_request',
        message: 'Invalid body: colour: unknown field',
        details: [{ field: 'colour', message: 'unknown field' }],
      },
    });
  });

  it('prefixes a query field with query', async () => {
    const res = await call('GET', '/v1/suppressions?limit=0');
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(/^Invalid query: query\.limit: /);
    expect(error.details).toEqual([{ field: 'query.limit', message: expect.any(String) }]);
  });

  it('refuses a control character in a path parameter before validating', async () => {
    const res = await call('GET', '/v1/templates/a%00b');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({
      code: 'invalid_request',
      message: 'Invalid path: slug holds a control character.',
      details: [{ field: 'path.slug', message: 'holds a control character' }],
    });
  });

  it('names the body itself when it is not an object', async () => {
    const res = await app.server.app.inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: '[]',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details[0].field).toBe('(body)');
    expect(res.json().error.message).toMatch(/^Invalid body: \(body\): /);
  });
});
