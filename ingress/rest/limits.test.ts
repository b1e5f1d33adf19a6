// The HTTP server closes connections of clients that hold them: slow headers, a silent
// connection, an idle keep-alive connection (issue 20 item 10). Each test waits for the close.
import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGate } from '../../gate/gate.ts';
import { EmbeddedRuntime } from '../../runtime/embedded/runtime.sqlite.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { KeyRing } from '../../tenancy/keys.ts';
import { tempDir } from '../../test/harness/gatepost.harness.ts';
import { restServer, type RestServer } from './server.ts';

let server: RestServer;
let catalog: SqliteCatalog;
let runtime: EmbeddedRuntime;
let port: number;

beforeAll(async () => {
  const dir = tempDir('limits');
  catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  runtime = new EmbeddedRuntime({ file: join(dir, 'actors.db') });
  server = restServer({
    gate: createGate({ invoker: runtime, catalog }),
    invoker: runtime,
    catalog,
    keys: new KeyRing(catalog),
    adminToken: null,
    http: { headersTimeoutMs: 300, requestTimeoutMs: 600, idleTimeoutMs: 200 },
    ready: () => true,
    version: '0.0.0-test',
    log: () => {},
  });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  port = (server.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await server.app.close();
  await runtime.stop();
  await catalog.close();
});

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
