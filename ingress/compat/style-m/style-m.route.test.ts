// Style M at the HTTP level (Fastify inject): a malformed multipart body is refused in Mailgun's
// format with 400, never a 500 (issue 20 item 9).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../../test/harness/app.harness.ts';
import type { RestServer } from '../../rest/server.ts';

let app: TestApp;
let server: RestServer;
let live: string;

beforeAll(async () => {
  app = await buildApp('style-m-route');
  server = app.server;
  live = (await app.keys.issue((await createTenant(app.catalog, { name: 't' })).id, 'live', null)).secret;
});
afterAll(() => app.close());

describe('a malformed multipart body', () => {
  it("is a 400 in Mailgun's format", async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/v3/shop.example/messages',
      headers: {
        authorization: `Basic ${Buffer.from(`api:${live}`).toString('base64')}`,
        'content-type': 'multipart/form-data; boundary=XYZ',
      },
      payload: '--XYZ\r\nContent-Disposition: form-data; name="to"\r\n\r\na@example.com\r\n--XY',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message: expect.stringContaining('multipart/form-data') });
    expect(res.headers['gatepost-error-code']).toBe('invalid_request');
  });
});

// Found by the fuzz suite: the router refuses these before Style M's scope sees the request.
describe('a domain the router refuses', () => {
  const post = (domain: string) =>
    server.app.inject({
      method: 'POST',
      url: `/v3/${domain}/messages`,
      headers: {
        authorization: `Basic ${Buffer.from(`api:${live}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'from=a%40shop.example&to=b%40example.com&subject=s&text=t',
    });

  it("is a 400 in Mailgun's format when it is over 100 characters", async () => {
    const res = await post('a'.repeat(101));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message: 'A path segment is over 100 characters.' });
    expect(res.headers['gatepost-error-code']).toBe('invalid_request');
  });

  it("is a 400 in Mailgun's format when it is not validly percent-encoded", async () => {
    const res = await post('%E0%A4%A');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message: 'The URL is not validly percent-encoded.' });
  });

  it('leaves a native URL its own format', async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: `/v1/messages/${'a'.repeat(101)}`,
      headers: { authorization: `Bearer ${live}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
  });
});
