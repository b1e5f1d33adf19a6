// Style M at the HTTP level (Fastify inject): a malformed multipart body is refused in Mailgun's
// format with 400, never a 500 (issue 20 item 9).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGate } from '../../../gate/gate.ts';
import { EmbeddedRuntime } from '../../../runtime/embedded/runtime.sqlite.ts';
import { SqliteCatalog } from '../../../store/sqlite/catalog.sqlite.ts';
import { KeyRing } from '../../../tenancy/keys.ts';
import { createTenant } from '../../../tenancy/tenants.ts';
import { tempDir } from '../../../test/harness/gatepost.harness.ts';
import { restServer, type RestServer } from '../../rest/server.ts';

let server: RestServer;
let catalog: SqliteCatalog;
let runtime: EmbeddedRuntime;
let live: string;

beforeAll(async () => {
  const dir = tempDir('style-m-route');
  catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  runtime = new EmbeddedRuntime({ file: join(dir, 'actors.db') });
  const keys = new KeyRing(catalog);
  live = (await keys.issue((await createTenant(catalog, { name: 't' })).id, 'live', null)).secret;
  server = restServer({
    gate: createGate({ invoker: runtime, catalog }),
    invoker: runtime,
    catalog,
    keys,
    adminToken: null,
    ready: () => true,
    version: '0.0.0-test',
    log: () => {},
  });
  await server.app.ready();
});
afterAll(async () => {
  await server.app.close();
  await runtime.stop();
  await catalog.close();
});

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
