// An in-process Gatepost HTTP app for route tests: an embedded runtime and a SQLite catalog in a
// temporary directory, and the whole REST server over them, not listening. Tests drive it with
// `server.app.inject()` (Fastify's way), or listen themselves where the socket is the point.
import { join } from 'node:path';
import { registerActors } from '../../app/gatepost.ts';
import { createGate } from '../../gate/gate.ts';
import type { RenderLimits } from '../../mail/render.limits.ts';
import { EventFeed } from '../../events/event.feed.ts';
import { restServer, type RestDeps, type RestServer } from '../../ingress/rest/server.ts';
import { EmbeddedRuntime } from '../../runtime/embedded/runtime.sqlite.ts';
import type { Invoker } from '../../runtime/runtime.port.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { Domains } from '../../tenancy/domains.ts';
import { KeyRing } from '../../tenancy/keys.ts';
import { InboundRoutes } from '../../tenancy/inbound.routes.ts';
import { TEST_RECORD_SETTINGS } from './domains.harness.ts';
import { tempDir } from './gatepost.harness.ts';
import { unreachableRelay } from './relay.harness.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';
import { mailHostOf } from '../../mta/mx.host.ts';
import { CachingMxResolver } from '../../mta/mx.resolve.ts';
import { dnsResolver } from '../../lib/dns.ts';

export interface TestApp {
  server: RestServer;
  catalog: SqliteCatalog;
  runtime: EmbeddedRuntime;
  keys: KeyRing;
  domains: Domains;
  inboundRoutes: InboundRoutes;
  /** The tenant event feed GET /v1/events reads (with `actors` only). */
  events: EventFeed | undefined;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Register the actors and start the runtime, for tests whose requests admit messages. */
  actors?: boolean;
  /** What the gate invokes actors through (default: the runtime), for tests that make it fail. */
  gateInvoker?: (runtime: EmbeddedRuntime) => Invoker;
  /**
   * The gate's sender rule as with a relay set (GATEPOST_SMTP_RELAY, and no
   * GATEPOST_REQUIRE_VERIFIED_DOMAIN): live mail from any domain. Without it, as with direct
   * delivery: only from a verified domain (domains.harness.ts verifies one).
   */
  relay?: boolean;
  /** Where domain verification and address validation look records up: a loopback DNS server (dns.harness.ts). */
  dnsServers?: string[];
  /** How long address validation waits for a DNS answer (lib/dns.ts's timeout; two tries). */
  dnsTimeoutMs?: number;
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
  const domains = new Domains(catalog, { ...TEST_RECORD_SETTINGS, dnsServers: options.dnsServers ?? null });
  // Where actors run here, their events feed GET /v1/events, as in one Gatepost process.
  const events = options.actors ? new EventFeed() : undefined;
  if (options.actors) {
    registerActors(runtime, {
      feed: events,
      catalog,
      transport: await unreachableRelay(),
      receiptKeys,
      signers: domains,
      retrySchedule: [],
      horizonMs: 0,
    });
    await runtime.start();
  }
  const keys = new KeyRing(catalog);
  const inboundRoutes = new InboundRoutes(catalog, TEST_RECORD_SETTINGS);
  const server = restServer({
    gate: createGate({
      invoker: options.gateInvoker?.(runtime) ?? runtime,
      catalog,
      senders: options.relay ? null : domains,
      renderLimits: options.renderLimits,
      linkHosts: domains,
    }),
    invoker: runtime,
    publisher: runtime,
    catalog,
    keys,
    receiptKeys,
    domains,
    // Tests never ask the internet's DNS: without a server of their own, a loopback port nothing answers on.
    mailHost: mailHostOf(new CachingMxResolver(dnsResolver(options.dnsServers ?? ['127.0.0.1:9'], options.dnsTimeoutMs))),
    inbound: { routes: inboundRoutes, publicUrl: () => 'http://gatepost.test' },
    events,
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
    domains,
    inboundRoutes,
    events,
    async close() {
      await server.app.close();
      await runtime.stop();
      await catalog.close();
    },
  };
}
