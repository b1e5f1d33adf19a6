// The browser SDK endpoints at the HTTP level (Fastify inject, no socket): CORS, content types,
// and the refusals that come before any message exists, as plain text with their status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../../test/harness/app.harness.ts';
import type { RestServer } from '../../rest/server.ts';

const SHOP = 'https://shop.example';
let app: TestApp;
let server: RestServer;
const keys: Record<'live' | 'anyOrigin' | 'shopOnly', string> = { live: '', anyOrigin: '', shopOnly: '' };

beforeAll(async () => {
  // A relay takes any sender: a live public key's send is committed without a verified domain.
  app = await buildApp('browser-ingress', { relay: true, actors: true });
  server = app.server;
  const tenant = await createTenant(app.catalog, { name: 'shop' });
  keys.live = (await app.keys.issue(tenant.id, 'live', null)).secret;
  keys.anyOrigin = (await app.keys.issue(tenant.id, 'public', null)).secret;
  keys.shopOnly = (await app.keys.issue(tenant.id, 'public', null, { allowed_origins: [SHOP] })).secret;
});
afterAll(() => app.close());

const send = (payload: unknown, headers: Record<string, string> = {}) =>
  server.app.inject({
    method: 'POST',
    url: '/api/v1.0/email/send',
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

const fields = (key: string) => ({ user_id: key, service_id: 'default_service', template_id: 'contact' });

describe('CORS', () => {
  it('answers the preflight for any origin (it carries no key), echoing it, never with credentials', async () => {
    for (const url of ['/api/v1.0/email/send', '/api/v1.0/email/send-form']) {
      const res = await server.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'POST' },
      });
      expect(res.statusCode).toBe(204);
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': 'https://anywhere.example',
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'Content-Type, Idempotency-Key, Authorization',
        vary: 'Origin',
      });
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('lets the page read a refusal, unless the refusal is of its origin', async () => {
    const unknownKey = await send(fields('gp_public_nope'), { origin: 'https://anywhere.example' });
    expect(unknownKey.statusCode).toBe(400);
    expect(unknownKey.headers['access-control-allow-origin']).toBe('https://anywhere.example');
    expect(unknownKey.headers['access-control-expose-headers']).toContain('Gatepost-Error-Code');

    const foreign = await send(fields(keys.shopOnly), { origin: 'https://anywhere.example' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.body).toBe("This key does not send from https://anywhere.example; add it to the key's allowed_origins");
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    expect(foreign.headers['access-control-expose-headers']).toBeUndefined();
    expect(foreign.headers['gatepost-error-code']).toBe('origin_not_allowed');
  });

  it('refuses a request naming no origin when the key has an allow-list (only a browser can be held to one)', async () => {
    const res = await send(fields(keys.shopOnly));
    expect(res.statusCode).toBe(403);
    expect(res.body).toBe('This key only sends from its allowed origins, and the request named none');
  });
});

describe('answers', () => {
  it('are plain text', async () => {
    const res = await send({});
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('The user_id parameter is required');
    expect(res.headers['gatepost-error-code']).toBe('missing_api_key');
  });

  it('refuse what is not JSON on send, and what is not a form on send-form', async () => {
    const plain = await send('{"user_id":"x"}', { 'content-type': 'text/plain' });
    expect([plain.statusCode, plain.body]).toEqual([
      400,
      'The send endpoint takes JSON (Content-Type: application/json); send-form takes multipart/form-data',
    ]);
    expect((await send('{"user_id":')).body).toBe('The request body is not valid JSON');
    const form = await server.app.inject({
      method: 'POST',
      url: '/api/v1.0/email/send-form',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(fields(keys.anyOrigin)),
    });
    expect([form.statusCode, form.body]).toEqual([400, 'The send-form endpoint takes multipart/form-data (a FormData body)']);
  });

  it('refuse a form field too long to keep whole (413), never truncating it', async () => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields(keys.anyOrigin))) form.append(name, value);
    form.append('message', 'x'.repeat(300 * 1024));
    const request = new Request('http://x/', { method: 'POST', body: form });
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/v1.0/email/send-form',
      headers: { 'content-type': request.headers.get('content-type')! },
      payload: Buffer.from(await request.arrayBuffer()),
    });
    expect([res.statusCode, res.body]).toEqual([413, 'The form field message is over 262144 bytes']);
  });

  it('refuse a live key with 403, and a bad Idempotency-Key with 400', async () => {
    const live = await send(fields(keys.live));
    expect([live.statusCode, live.body]).toEqual([
      403,
      'The browser SDK endpoints take a public key (gp_public_), never a live key.',
    ]);
    const key = await send(fields(keys.anyOrigin), { 'idempotency-key': 'has spaces' });
    expect(key.statusCode).toBe(400);
    expect(key.body).toMatch(/^Invalid Idempotency-Key header/);
  });
});

describe('a malformed multipart body (issue 20 item 9)', () => {
  it('is a 400 in the browser style, not a 500', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/v1.0/email/send-form',
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      payload: '--XYZ\r\nContent-Disposition: form-data; name="user_id"\r\n\r\nabc\r\n--XY',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['gatepost-error-code']).toBe('invalid_request');
  });
});

describe("the native browser send (POST /v1/browser/emails, the browser bundle's)", () => {
  const native = (key: string | null, payload: unknown, headers: Record<string, string> = {}) =>
    server.app.inject({
      method: 'POST',
      url: '/v1/browser/emails',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      payload: JSON.stringify(payload),
    });

  beforeAll(async () => {
    const made = await server.app.inject({
      method: 'POST',
      url: '/v1/templates',
      headers: { authorization: `Bearer ${keys.live}` },
      payload: { slug: 'native-contact', subject: 'Hi', html: '<p>{{message}}</p>', to: 'desk@shop.example', from: 'site@shop.example' },
    });
    expect(made.statusCode).toBe(201);
  });

  it('answers its preflight with Authorization among the headers a page may set', async () => {
    const res = await server.app.inject({
      method: 'OPTIONS',
      url: '/v1/browser/emails',
      headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-headers']).toContain('Authorization');
  });

  it("commits a send to the template's recipient and answers as POST /v1/emails does", async () => {
    const res = await native(keys.shopOnly, { template: 'native-contact', data: { message: 'Hello' } }, { origin: SHOP });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(res.json()).toMatchObject({ id: expect.stringMatching(/^msg_/), status: 'queued', to: 'desk@shop.example' });
  });

  it('refuses in native JSON with codes: no key, a live key, a field naming an address, an unknown template', async () => {
    const cases: [string | null, unknown, number, string][] = [
      [null, { template: 'native-contact' }, 401, 'missing_api_key'],
      ['gp_public_nope', { template: 'native-contact' }, 401, 'invalid_api_key'],
      [keys.live, { template: 'native-contact' }, 403, 'key_not_allowed'],
      [keys.anyOrigin, { template: 'native-contact', to: 'attacker@evil.example' }, 400, 'invalid_request'],
      [keys.anyOrigin, { template: 'no-such-template' }, 422, 'template_not_found'],
    ];
    for (const [key, body, status, code] of cases) {
      const res = await native(key, body);
      expect([res.statusCode, res.json().error.code], JSON.stringify(body)).toEqual([status, code]);
    }
  });

  it('refuses a foreign origin without letting the page read why', async () => {
    const res = await native(keys.shopOnly, { template: 'native-contact' }, { origin: 'https://anywhere.example' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('origin_not_allowed');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
