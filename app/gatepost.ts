// The composition root: builds one Gatepost from a Config (no singletons, so a test can run two).
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import pkg from '../package.json' with { type: 'json' };
import type { Config } from '../config/config.ts';
import type { ActorRuntime } from '../runtime/runtime.port.ts';
import { EmbeddedRuntime } from '../runtime/embedded/runtime.sqlite.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { PgCatalog } from '../store/postgres/catalog.pg.ts';
import { DaprRuntime } from '../dapr/adapter/runtime.dapr.ts';
import type { Catalog } from '../store/catalog.port.ts';
import { tenantActor } from '../actors/tenant/tenant.actor.ts';
import { sourceIpActor } from '../actors/source-ip/source.ip.actor.ts';
import { recipientActorWith } from '../actors/recipient/recipient.actor.ts';
import { catalogIndex } from '../actors/recipient/suppression.index.ts';
import { QuotaTally } from '../actors/tenant/quota.tally.ts';
import { mirrorSuppressions } from '../actors/recipient/mirror.ts';
import { reputationListener } from '../actors/tenant/reputation.feed.ts';
import { breakerMirror } from '../actors/tenant/breaker.mirror.ts';
import type { BreakerSettings } from '../actors/tenant/reputation.state.ts';
import type { WarmupSettings } from '../actors/tenant/warmup.state.ts';
import { messageActorWith } from '../actors/message/message.actor.ts';
import { deliveryActor, sandboxCapture, type DeliveryDeps } from '../actors/delivery/delivery.actor.ts';
import { dispatchMessages } from '../actors/delivery/dispatch.ts';
import type { FairQueue } from '../mta/fair.queue.ts';
import { batchActor } from '../actors/batch/batch.actor.ts';
import { broadcastActor } from '../actors/broadcast/broadcast.actor.ts';
import { broadcastListener } from '../actors/broadcast/broadcast.feed.ts';
import type { ContactAdmitter } from '../actors/broadcast/broadcast.state.ts';
import { broadcastAdmitter } from '../gate/broadcast.admission.ts';
import { webhookActor } from '../actors/webhook/webhook.actor.ts';
import { EventFeed } from '../events/event.feed.ts';
import type { EmailEvent } from '../events/email.event.ts';
import { fanOutWebhooks } from '../actors/webhook/fanout.ts';
import { automationRunActor, type AutomationRunDeps } from '../actors/automation/automation.actor.ts';
import { automationListener, mirrorRuns } from '../actors/automation/automation.trigger.ts';
import { automationSender } from '../gate/automations.ts';
import { loadConfig } from '../config/config.ts';
import { SsrfGuard } from '../webhooks/ssrf.guard.ts';
import { smtpRelay } from '../mta/relay.smtp.ts';
import { directTransport } from '../mta/direct.smtp.ts';
import { assertLocalAddresses } from '../mta/source.ips.ts';
import type { Transport } from '../mta/transport.ts';
import { ReceiptKeys } from '../mta/receipt.keys.ts';
import { mailHostOf } from '../mta/mx.host.ts';
import { CachingMxResolver } from '../mta/mx.resolve.ts';
import { dnsResolver } from '../lib/dns.ts';
import { createGate } from '../gate/gate.ts';
import { Domains } from '../tenancy/domains.ts';
import { KeyRing } from '../tenancy/keys.ts';
import { bootstrapDefaultTenant } from '../tenancy/tenants.ts';
import { restServer } from '../ingress/rest/server.ts';
import { submissionServer } from '../ingress/smtp/submission.smtp.ts';
import { submissionTls } from '../ingress/smtp/submission.tls.ts';
import { inboundServer } from '../ingress/inbound/inbound.smtp.ts';
import { bouncesIntake } from '../ingress/inbound/bounces.intake.ts';
import { mailtoUnsubscribes } from '../gate/tracking.ts';
import { InboundRoutes } from '../tenancy/inbound.routes.ts';
import { webhookDeliveries } from '../gate/webhooks.ts';
import { keySealer, plainSealer } from '../lib/sealed.ts';
import { uncounted, type EventLog, type Metrics } from '../ops/metrics.port.ts';
import { promMetrics } from '../ops/metrics.prom.ts';
import { gatepostLog, type Logger } from '../ops/log.ts';
import { embeddedQueue } from './queue.embedded.ts';
import { clusterQueue, tellQueue } from './queue.shared.ts';
import { opsServer } from './ops.server.ts';
import { releaseMemoryWhenQuiet, type MemoryRelease } from '../lib/memory.ts';

export interface Gatepost {
  /** The base URL the HTTP API listens on; null for a process that only hosts actors. */
  url: string | null;
  /** Where SMTP submission listens; null for a process that only hosts actors. */
  smtp: { host: string; port: number; selfSignedCert: string | null } | null;
  /** Where the inbound MX listens; null for a process that only hosts actors. */
  inbound: { host: string; port: number } | null;
  /** Where an actor host serves GET /metrics (the API process serves it at `url`); null elsewhere. */
  opsUrl: string | null;
  runtime: ActorRuntime;
  catalog: Catalog;
  /** Keys made by a first start (empty data directory), to show the person starting it. */
  firstStartKeys: { tenant_id: string; live: string; sandbox: string } | null;
  /** Drains: stops taking requests, finishes those under way, makes everything durable. */
  stop(): Promise<void>;
}

const VERSION = pkg.version;

/** Where code composed without a log (registerActors in tests) reports failures. */
const log = (message: string, error?: unknown) => console.error(`[gatepost] ${message}`, error ?? '');

/** Failures the service reports (a store, a subscriber, a request): error lines of the JSON log. */
const reportTo =
  (logger: Logger) =>
  (message: string, error?: unknown): void =>
    logger.error(error === undefined ? {} : { err: error }, message);

export interface WebhookSettings {
  guard: SsrfGuard;
  retrySchedule: number[];
  timeoutMs: number;
  disableAfterMs: number;
}

/** The defaults of the operator contract, with nothing allowed past the SSRF guard. */
function defaultWebhookSettings(): WebhookSettings {
  const c = loadConfig({});
  return {
    guard: new SsrfGuard(),
    retrySchedule: c.webhookRetrySchedule,
    timeoutMs: c.webhookTimeoutMs,
    disableAfterMs: c.webhookDisableAfterMs,
  };
}

/** Wires the actors and what happens after a commit onto a runtime: the same for every adapter. */
export function registerActors(
  runtime: ActorRuntime,
  deps: {
    catalog: Catalog;
    transport: Transport;
    receiptKeys: ReceiptKeys;
    signers: DeliveryDeps['signers'];
    retrySchedule: number[];
    horizonMs: number;
    /** The reputation breaker's settings; the defaults when not given. */
    breaker?: BreakerSettings;
    /** The warmup's settings; off when not given (a test that is not about warmup is not capped by it). */
    warmup?: WarmupSettings;
    /** The local addresses direct delivery connects from (GATEPOST_SOURCE_IPS); none when not given. */
    sourceIps?: string[];
    webhooks?: WebhookSettings;
    /** The tenant event feed to fill, where this process also serves the API. */
    feed?: EventFeed;
    /** Hears the tenant of each sandbox message put in the capture inbox. */
    onCapture?: (tenantId: string) => void;
    /** Counters and the log of delivery and webhook attempts; none: nothing counted or logged. */
    observers?: { metrics: Metrics; log: EventLog };
    /** Where failures are reported; stderr by default. */
    report?: (message: string, error?: unknown) => void;
    /** Messages in flight at once per destination in the fair queue (GATEPOST_MX_MAX_CONNECTIONS); 5 when not given. */
    queueSlots?: number;
    /** How automation runs send (the gate's admission, gate/automations.ts); none: this process hosts no runs. */
    automationSend?: AutomationRunDeps['send'];
    /** How broadcasts admit their contacts' messages: the gate as the service has it; by default one with the gate's defaults. */
    contacts?: ContactAdmitter;
    /** Mirrors each tenant's breaker status into the catalog, for GET /metrics where the runtime cannot list them (Dapr). */
    mirrorBreakers?: boolean;
  },
): { drain(): Promise<void>; queue: FairQueue } {
  const { catalog } = deps;
  const webhooks = deps.webhooks ?? defaultWebhookSettings();
  const breaker = deps.breaker ?? loadConfig({}).breaker;
  const delivery = deliveryActor({
    breaker,
    warmup: deps.warmup ?? { ...loadConfig({}).warmup, enabled: false },
    sourceIps: deps.sourceIps ?? [],
    transport: deps.transport,
    signers: deps.signers,
    receiptKeys: deps.receiptKeys,
    retrySchedule: deps.retrySchedule,
    horizonMs: deps.horizonMs,
    ...deps.observers,
  });
  runtime.register(tenantActor);
  runtime.register(sourceIpActor);
  // Suppressions are listed in the catalog, which admission reads before it asks a recipient's
  // actor; the sends of tenants without limits are tallied here, not taken from their actor.
  const suppressions = catalogIndex(catalog);
  const tally = new QuotaTally(runtime, deps.report ?? log);
  runtime.register(recipientActorWith(suppressions));
  const capture = sandboxCapture(catalog, {
    signers: deps.signers,
    ...(deps.onCapture ? { onCapture: deps.onCapture } : {}),
    ...(deps.observers ? { observers: deps.observers } : {}),
  });
  runtime.register(messageActorWith({ suppressions, tally, capture }));
  runtime.register(batchActor);
  const contacts = deps.contacts ?? broadcastAdmitter(createGate({ catalog, senders: null, invoker: runtime }), catalog);
  runtime.register(broadcastActor({ catalog, admitter: contacts }));
  runtime.register(delivery);
  runtime.register(webhookActor({ catalog, ...webhooks }));
  if (deps.automationSend) {
    runtime.register(automationRunActor({ catalog, send: deps.automationSend }));
    mirrorRuns(runtime, catalog);
  }
  const reputation = reputationListener(runtime, breaker);
  const automations = deps.automationSend ? automationListener(runtime, catalog) : null;

  const queue = dispatchMessages(runtime, {
    catalog,
    delivery,
    slots: deps.queueSlots ?? loadConfig({}).mxMaxConnections,
    report: deps.report ?? log,
  });
  mirrorSuppressions(runtime, catalog);
  const fanOut = fanOutWebhooks(runtime, {
    catalog,
    guard: webhooks.guard,
    timeoutMs: webhooks.timeoutMs,
    log: deps.report ?? log,
    feed: deps.feed,
    // The idempotent listeners first (starting a run, counting a broadcast's event once): should the
    // breaker's turn fail, the event comes again.
    listener: everyListener(
      ...(automations ? [automations] : []),
      broadcastListener(catalog),
      ...(deps.mirrorBreakers ? [breakerMirror(catalog)] : []),
      reputation,
    ),
    ...(deps.observers ? { metrics: deps.observers.metrics } : {}),
  });
  return {
    queue,
    // The deliveries under way finish; what waits in the queue comes back by its reminders.
    drain: async () => {
      await queue.close();
      await fanOut.drain();
      await tally.stop();
    },
  };
}

/** Listeners told each event in turn: a topic has one subscriber, the webhook fan-out, which tells this. */
function everyListener(...listeners: ((e: EmailEvent) => Promise<void>)[]): (e: EmailEvent) => Promise<void> {
  return async (e) => {
    for (const listener of listeners) await listener(e);
  };
}

/** The relay (a smarthost) when one is configured; direct delivery to each recipient domain's MX hosts otherwise. */
function transportOf(config: Config): Transport {
  if (config.smtpRelay) return smtpRelay(config.smtpRelay);
  return directTransport({
    resolver: dnsResolver(config.dnsServers),
    port: config.mxPort,
    hostname: config.hostname,
    maxConnections: config.mxMaxConnections,
    timeouts: config.mxTimeouts,
  });
}

function openCatalog(config: Config, log: (message: string, error?: unknown) => void): Promise<Catalog> {
  const sealer = config.encryption ? keySealer(config.encryption.current, config.encryption.old) : plainSealer;
  if (config.runtime === 'embedded') return Promise.resolve(new SqliteCatalog(join(config.dataDir, 'catalog.db'), sealer));
  return PgCatalog.open(config.databaseUrl!, { onError: (error) => log('catalog connection failed', error), sealer });
}

function openRuntime(config: Config, log: (message: string, error?: unknown) => void, memory: MemoryRelease): ActorRuntime {
  if (config.runtime === 'embedded')
    return new EmbeddedRuntime({ file: join(config.dataDir, 'actors.db'), log, garbageLeft: memory.garbageLeft });
  return new DaprRuntime({
    daprHttpPort: config.daprHttpPort,
    daprGrpcPort: config.daprGrpcPort,
    // Only a process that hosts actors serves Dapr's callbacks.
    appPort: config.role === 'ingress' ? null : config.appPort,
    pubsub: config.pubsub,
    log,
  });
}

export async function startGatepost(config: Config): Promise<Gatepost> {
  const hostsActors = config.role !== 'ingress';
  const servesApi = config.role !== 'actors';
  // Delivery connects from them where the actors run: an address this machine has not fails the start.
  if (hostsActors) await assertLocalAddresses(config.sourceIps);
  const logger = gatepostLog(config.logLevel);
  const report = reportTo(logger);
  const memory = releaseMemoryWhenQuiet();
  const catalog = await openCatalog(config, report);
  const runtime = openRuntime(config, report, memory);
  // Read at scrape time from the embedded runtime's file; Dapr's state store cannot tell it cheaply.
  let queue: ReturnType<typeof embeddedQueue> | null = null;
  const embedded = () => (queue ??= embeddedQueue(join(config.dataDir, 'actors.db')));
  // The fair queue is made with the actors, below (which are handed these metrics).
  let fairQueue: FairQueue | null = null;
  const prom = config.metrics
    ? promMetrics({
        queue: config.runtime === 'embedded' ? () => embedded().read() : null,
        fairQueue: hostsActors ? () => fairQueue?.destinations() ?? [] : null,
        // On Dapr from the catalog's mirror of their transitions (actors/tenant/breaker.mirror.ts),
        // gauged where the API is served: every actor host would answer the same rows.
        breakers: config.runtime === 'embedded' ? () => embedded().breakers() : servesApi ? () => catalog.breakerStates() : null,
        daprCalls: runtime instanceof DaprRuntime ? () => runtime.sidecar.calls.snapshot() : null,
      })
    : null;
  const metrics: Metrics = prom ?? uncounted;
  const metricsSource = prom && { scrape: () => prom.scrape(), token: config.metricsToken };
  const records = {
    hostname: config.hostname,
    spf: config.spf,
    trackingTarget: config.publicUrl ? new URL(config.publicUrl).hostname : config.hostname,
  };
  const domains = new Domains(catalog, { ...records, dnsServers: config.dnsServers });
  const inboundRoutes = new InboundRoutes(catalog, records);
  const transport = hostsActors ? transportOf(config) : null;
  // Delivery signs receipts with them; the API serves their JWKS and rotates them.
  const receiptKeys = new ReceiptKeys(catalog);
  // Events are fanned out where actors are hosted: GET /v1/events is served where both are.
  const feed = hostsActors && servesApi ? new EventFeed() : undefined;
  const guard = new SsrfGuard({ allow: config.webhookAllow, dnsServers: config.dnsServers });
  // A capture here wakes the inbox's open streams of its tenant at once (another process's
  // captures reach them by polling: ingress/inbox/capture.stream.ts).
  const captures = new EventEmitter().setMaxListeners(0);
  // Deliveries must never reach Gatepost's own API or its Dapr sidecar on this machine.
  guard.protectPorts(
    config.port,
    ...(config.runtime === 'dapr' ? [config.daprHttpPort, config.daprGrpcPort, config.appPort] : []),
  );
  const keys = new KeyRing(catalog);
  // Without GATEPOST_PUBLIC_URL, links point at the API's own address, known once it listens.
  let publicUrl = config.publicUrl;
  const gate = createGate({
    publicUrl: () => publicUrl ?? `http://localhost:${config.port}`,
    linkHosts: domains,
    invoker: runtime,
    catalog,
    senders: config.requireVerifiedDomain ? domains : null,
    renderLimits: config.render,
    metrics,
  });
  const actors = hostsActors
    ? registerActors(runtime, {
        catalog,
        transport: transport!,
        receiptKeys,
        signers: domains,
        retrySchedule: config.deliveryRetrySchedule,
        horizonMs: config.deliveryHorizonMs,
        breaker: config.breaker,
        warmup: config.warmup,
        sourceIps: config.sourceIps,
        onCapture: (tenantId) => captures.emit(tenantId),
        webhooks: {
          guard,
          retrySchedule: config.webhookRetrySchedule,
          timeoutMs: config.webhookTimeoutMs,
          disableAfterMs: config.webhookDisableAfterMs,
        },
        feed,
        // A delivery attempt's line holds known fields and no credential: written without the
        // redaction, which was 28 % of the line's cost (1.6 us of the event loop a sandbox send, bench:send profile, 2026-11-27).
        observers: { metrics, log: logger.child({}, { redact: [] }) },
        report,
        queueSlots: config.mxMaxConnections,
        automationSend: automationSender(gate, catalog),
        contacts: broadcastAdmitter(gate, catalog),
        mirrorBreakers: config.runtime === 'dapr',
      })
    : null;
  fairQueue = actors?.queue ?? null;
  const told = config.runtime === 'dapr' && actors ? tellQueue(catalog, () => actors.queue.rows(), report) : null;

  let ready = false;
  const rest = servesApi
    ? restServer({
        gate,
        invoker: runtime,
        publisher: runtime,
        catalog,
        keys,
        receiptKeys,
        domains,
        senders: config.requireVerifiedDomain ? domains : null,
        warmup: config.warmup,
        sourceIps: config.sourceIps,
        mailHost: mailHostOf(new CachingMxResolver(dnsResolver(config.dnsServers))),
        inbound: { routes: inboundRoutes, publicUrl: () => publicUrl ?? `http://localhost:${config.port}` },
        webhookGuard: guard,
        events: feed,
        adminToken: config.adminToken,
        queue: config.runtime === 'dapr' ? clusterQueue(catalog) : () => actors?.queue.rows() ?? [],
        captures,
        http: config.http,
        ready: () => ready,
        version: VERSION,
        log: report,
        ...(metricsSource ? { metrics: metricsSource } : {}),
        logger,
      })
    : null;
  // An actor host serves its own counters on PORT (the HTTP API process serves the others).
  const ops = servesApi ? null : opsServer(metricsSource, report);

  const tls = servesApi
    ? await submissionTls({ configured: config.smtpTls, dataDir: config.dataDir, hostname: config.hostname })
    : null;
  const smtp = tls
    ? submissionServer({ gate, keys, log: report, tls, hostname: config.hostname, limits: config.smtpLimits })
    : null;
  // The inbound MX presents its own certificate when given one (it answers for the MX host name), else submission's.
  const inboundTls =
    tls && config.inboundTls
      ? await submissionTls({ configured: config.inboundTls, dataDir: config.dataDir, hostname: config.hostname })
      : tls;
  const inbound = inboundTls
    ? inboundServer({
        routes: inboundRoutes,
        catalog,
        webhooks: webhookDeliveries(runtime),
        intake: bouncesIntake({ invoker: runtime, catalog }),
        unsubscribes: mailtoUnsubscribes(runtime),
        dnsServers: config.dnsServers,
        hostname: config.hostname,
        publicUrl: () => publicUrl ?? `http://localhost:${config.port}`,
        log: report,
        tls: inboundTls,
        maxBytes: config.inboundMaxBytes,
        spoolDir: join(config.dataDir, 'inbound-spool'),
        maxClients: config.smtpLimits.maxClients,
        idleTimeoutMs: config.smtpLimits.idleTimeoutMs,
      })
    : null;

  await runtime.start();
  const bootstrap = servesApi ? await bootstrapDefaultTenant(catalog, keys, config.hostname) : null;
  const address = rest ? await rest.app.listen({ port: config.port, host: config.host }) : null;
  const opsAddress = ops ? await ops.listen({ port: config.port, host: config.host }) : null;
  if (opsAddress) guard.protectPorts(Number(new URL(opsAddress).port));
  if (address) guard.protectPorts(Number(new URL(address).port));
  const url = address && address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
  publicUrl ??= url;
  const smtpAddress = smtp ? await smtp.listen(config.smtpPort, config.smtpHost) : null;
  if (smtpAddress) guard.protectPorts(smtpAddress.port);
  const inboundAddress = inbound ? await inbound.listen(config.inboundPort, config.inboundHost) : null;
  if (inboundAddress) guard.protectPorts(inboundAddress.port);
  ready = true;

  let stopping: Promise<void> | null = null;
  return {
    url,
    smtp: smtpAddress && { ...smtpAddress, selfSignedCert: tls!.selfSignedPath },
    inbound: inboundAddress,
    opsUrl: opsAddress && opsAddress.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
    runtime,
    catalog,
    firstStartKeys: bootstrap ? { tenant_id: bootstrap.tenant.id, live: bootstrap.live, sandbox: bootstrap.sandbox } : null,
    stop() {
      stopping ??= (async () => {
        ready = false;
        await Promise.all([rest?.drain(), smtp?.drain(), inbound?.drain()]);
        await actors?.drain();
        await told?.stop();
        await ops?.close();
        await runtime.stop();
        await queue?.close();
        await new Promise<void>((resolve) => logger.flush(() => resolve()));
        await transport?.close();
        await catalog.close();
        memory.stop();
      })();
      return stopping;
    },
  };
}
