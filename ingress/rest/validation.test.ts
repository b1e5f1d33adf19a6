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

  it('refuses a NUL in any string or key of a JSON body, and takes the text \\u0000', async () => {
    const send = (payload: string, url = '/v1/templates') =>
      app.server.app.inject({
        method: 'POST',
        url,
        headers: {
          authorization: `Bearer ${url.startsWith('/v1/admin/') ? ADMIN : key}`,
          'content-type': 'application/json; charset=utf-8',
        },
        payload,
      });
    for (const [url, payload] of [
      ['/v1/templates', '{"slug": "nul", "subject": "a\\u0000b", "html": "h"}'],
      ['/v1/emails', '{"to": "a@example.com", "subject": "s", "html": "h", "data": {"k\\u0000": 1}}'],
      ['/v1/admin/tenants', '{"name": "\\u0000"}'],
    ]) {
      const res = await send(payload!, url);
      expect(res.statusCode, payload).toBe(400);
      expect(res.json().error).toEqual({ code: 'invalid_request', message: 'The body holds a NUL character (\\u0000).' });
    }
    // A backslash and "u0000" is text like any other.
    const literal = await send('{"slug": "literal", "subject": "a\\\\u0000b", "html": "h"}');
    expect(literal.statusCode).toBe(201);
    expect(literal.json().subject).toBe('a\\u0000b');
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
