// An in-process Gatepost HTTP app for route tests: an embedded runtime and a SQLite catalog in a
// temporary directory, and the whole REST server over them, not listening. Tests drive it with
// `server.app.inject()` (Fastify's way), or listen themselves where the socket is the point.
import { join } from 'node:path';
import { registerActors } from '../../app/gatepost.ts';
import { createGate } from '../../gate/gate.ts';
import type { RenderLimits } from '../../mail/render.limits.ts';
import { restServer, type RestDeps, type RestServer } from '../../ingress/rest/server.ts';
import { EmbeddedRuntime } from '../../runtime/embedded/runtime.sqlite.ts';
import type { Invoker } from '../../runtime/runtime.port.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { KeyRing } from '../../tenancy/keys.ts';
import { tempDir } from './gatepost.harness.ts';
import { unreachableRelay } from './relay.harness.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';

export interface TestApp {
  server: RestServer;
  catalog: SqliteCatalog;
  runtime: EmbeddedRuntime;
  keys: KeyRing;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Register the actors and start the runtime, for tests whose requests admit messages. */
  actors?: boolean;
  /** What the gate invokes actors through (default: the runtime), for tests that make it fail. */
  gateInvoker?: (runtime: EmbeddedRuntime) => Invoker;
  /** What one render may cost, for tests of lowered limits (default: the defaults). */
  renderLimits?: RenderLimits;
  /** REST dependencies to set beside the defaults (admin token, HTTP limits, log). */
  deps?: Partial<Pick<RestDeps, 'adminToken' | 'http' | 'log'>>;
}

export async function buildApp(name: string, options: TestAppOptions = {}): Promise<TestApp> {
  const dir = tempDir(name);
  const catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  const runtime = new EmbeddedRuntime({ file: join(dir, 'actors.db') });
  const receiptKeys = new ReceiptKeys(catalog);
  if (options.actors) {
    registerActors(runtime, { catalog, transport: await unreachableRelay(), receiptKeys, retrySchedule: [], horizonMs: 0 });
    await runtime.start();
  }
  const keys = new KeyRing(catalog);
  const server = restServer({
    gate: createGate({ invoker: options.gateInvoker?.(runtime) ?? runtime, catalog, renderLimits: options.renderLimits }),
    invoker: runtime,
    catalog,
    keys,
    receiptKeys,
    adminToken: null,
    ready: () => true,
    version: '0.0.0-test',
    log: () => {},
    ...options.deps,
  });
  await server.app.ready();
  return {
    server,
    catalog,
    runtime,
    keys,
    async close() {
      await server.app.close();
      await runtime.stop();
      await catalog.close();
    },
  };
}
