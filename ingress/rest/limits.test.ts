// The HTTP server's limits on clients: failed authentications per client address (issue 20
// item 7), and connections held open by slow headers, silence or an idle keep-alive connection
// (item 10; each such test waits for the close).
import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { AUTH_FAILURES_PER_MINUTE } from './auth.hooks.ts';
import type { RestServer } from './server.ts';

let app: TestApp;
let server: RestServer;
let port: number;
let live: string;

beforeAll(async () => {
  app = await buildApp('limits', {
    deps: {
      adminToken: 'an-admin-token-of-at-least-32-characters',
      http: { headersTimeoutMs: 300, requestTimeoutMs: 600, idleTimeoutMs: 200 },
    },
  });
  server = app.server;
  live = (await app.keys.issue((await createTenant(app.catalog, { name: 't' })).id, 'live', null)).secret;
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  port = (server.app.server.address() as AddressInfo).port;
});
afterAll(() => app.close());

async function opened(): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString()));
  await once(socket, 'connect');
  return { socket, received: () => text };
}

describe('HTTP timeouts', () => {
  it('closes a connection whose headers never end', async () => {
    const { socket } = await opened();
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    await once(socket, 'close');
  });

  it('closes a connection that sends nothing', async () => {
    const { socket } = await opened();
    await once(socket, 'close');
  });

  it('answers a request, then closes the idle keep-alive connection', async () => {
    const { socket, received } = await opened();
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await once(socket, 'close');
    expect(received()).toMatch(/^HTTP\/1.1 200 /);
  });
});

describe('failed authentications', () => {
  const templates = (remoteAddress: string, key: string) =>
    server.app.inject({ method: 'GET', url: '/v1/templates', remoteAddress, headers: { authorization: `Bearer ${key}` } });

  it('are limited per client address: past the limit even the right key is refused, with Retry-After', async () => {
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) {
      expect((await templates('192.0.2.1', 'gp_live_wrong')).statusCode).toBe(401);
    }
    const refused = await templates('192.0.2.1', live);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: { code: 'rate_limited' } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not affected, nor does a right key count.
    for (let i = 0; i <= AUTH_FAILURES_PER_MINUTE; i++) expect((await templates('192.0.2.2', live)).statusCode).toBe(200);
  });

  it('count across scopes, and each answers in its own format', async () => {
    const admin = () =>
      server.app.inject({
        method: 'GET',
        url: '/v1/admin/tenants',
        remoteAddress: '192.0.2.3',
        headers: { authorization: 'Bearer guess' },
      });
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) expect((await admin()).statusCode).toBe(401);
    expect((await admin()).statusCode).toBe(429);
    const styleP = await server.app.inject({
      method: 'POST',
      url: '/email',
      remoteAddress: '192.0.2.3',
      headers: { 'x-postmark-server-token': live, 'content-type': 'application/json' },
      payload: {},
    });
    expect(styleP.statusCode).toBe(429);
    expect(styleP.json()).toMatchObject({ ErrorCode: 429 });
    expect(styleP.headers['retry-after']).toBeDefined();
  });
});

describe("Fastify's own refusals (issue 20 item 9)", () => {
  it('answers a path segment too long for the router in the native error format', async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: `/v1/messages/msg_${'a'.repeat(196)}`,
      headers: { authorization: `Bearer ${live}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('characters') } });
  });

  it('answers a URL that cannot be decoded in the native error format', async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: '/v1/templates/%E0%A4%A',
      headers: { authorization: `Bearer ${live}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'invalid_request' } });
  });
});

// PostgreSQL refuses a NUL in text: DELETE /v1/webhooks/%00 was a 500 on the Dapr runtime (the
// fuzz suite's find). Every route refuses a control character in its path before a store sees it.
describe('a path parameter holding a control character', () => {
  it.each(['%00', 'whk_%0Aa', '%7F'])('is a coded 400 on every route (%s)', async (id) => {
    for (const [method, url] of [
      ['DELETE', `/v1/webhooks/${id}`],
      ['GET', `/v1/templates/${id}`],
      ['GET', `/v1/messages/${id}`],
    ] as const) {
      const res = await server.app.inject({ method, url, headers: { authorization: `Bearer ${live}` } });
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(res.json()).toMatchObject({
        error: { code: 'invalid_request', message: expect.stringContaining('control character') },
      });
    }
  });
});
