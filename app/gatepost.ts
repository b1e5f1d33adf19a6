// The composition root: builds one Gatepost from a Config (no singletons, so a test can run two).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.ts';
import { actor, type ActorRuntime } from '../runtime/runtime.port.ts';
import { EmbeddedRuntime } from '../runtime/embedded/runtime.sqlite.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { PgCatalog } from '../store/postgres/catalog.pg.ts';
import { DaprRuntime } from '../dapr/adapter/runtime.dapr.ts';
import type { Catalog } from '../store/catalog.port.ts';
import { tenantActor } from '../actors/tenant/tenant.actor.ts';
import {
  recipientActor,
  recipientActorId,
  SUPPRESSION_CHANGED,
  type SuppressionChanged,
} from '../actors/recipient/recipient.actor.ts';
import { EMAIL_EVENTS, MESSAGE_EXPIRED, MESSAGE_READY, messageActor } from '../actors/message/message.actor.ts';
import { captureSandbox, deliveryActor } from '../actors/delivery/delivery.actor.ts';
import { batchActor } from '../actors/batch/batch.actor.ts';
import type { EmailEvent, MessageReady } from '../actors/message/message.state.ts';
import { webhookActor, webhookClient } from '../actors/webhook/webhook.actor.ts';
import { PER_ENDPOINT, WebhookLanes } from '../actors/webhook/webhook.lanes.ts';
import { WEBHOOK_DUE, type WebhookDue } from '../actors/webhook/webhook.state.ts';
import { loadConfig } from '../config/config.ts';
import { SsrfGuard } from '../webhooks/ssrf.guard.ts';
import { WebhookPoster } from '../webhooks/webhook.http.ts';
import { smtpRelay, type Relay } from '../mta/relay.smtp.ts';
import { createGate } from '../gate/gate.ts';
import { KeyRing } from '../tenancy/keys.ts';
import { bootstrapDefaultTenant } from '../tenancy/tenants.ts';
import { restServer } from '../ingress/rest/server.ts';
import { submissionServer } from '../ingress/smtp/submission.smtp.ts';
import { submissionTls } from '../ingress/smtp/submission.tls.ts';

export interface Gatepost {
  /** The base URL the HTTP API listens on; null for a process that only hosts actors. */
  url: string | null;
  /** Where SMTP submission listens; null for a process that only hosts actors. */
  smtp: { host: string; port: number; selfSignedCert: string | null } | null;
  runtime: ActorRuntime;
  catalog: Catalog;
  /** Keys made by a first start (empty data directory), to show the person starting it. */
  firstStartKeys: { tenant_id: string; live: string; sandbox: string } | null;
  /** Drains: stops taking requests, finishes those under way, makes everything durable. */
  stop(): Promise<void>;
}

const VERSION = (
  JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { version: string }
).version;

const log = (message: string, error?: unknown) => console.error(`[gatepost] ${message}`, error ?? '');

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

/** Wires the actors and subscriptions onto a runtime: the same for every adapter. */
export function registerActors(
  runtime: ActorRuntime,
  deps: { catalog: Catalog; relay: Relay | null; retrySchedule: number[]; webhooks?: WebhookSettings },
): { drain(): Promise<void> } {
  runtime.register(tenantActor);
  runtime.register(recipientActor);
  runtime.register(messageActor);
  runtime.register(batchActor);
  const delivery = deliveryActor({ relay: deps.relay, catalog: deps.catalog, retrySchedule: deps.retrySchedule });
  runtime.register(delivery);

  runtime.subscribe(MESSAGE_READY, async ({ data }) => {
    const ready = data as MessageReady;
    if (ready.sandbox) return void (await captureSandbox(runtime, deps.catalog, ready));
    const d = actor(runtime, delivery, ready.message_id);
    const { attempt, interrupted, number } = await d.begin(undefined);
    if (attempt) await d.attempt({ interrupted, number });
  });
  runtime.subscribe(MESSAGE_EXPIRED, async ({ data }) => {
    await actor(runtime, delivery, (data as { message_id: string }).message_id).forget(undefined);
  });
  // The list follows the actor: re-read it rather than trust the order events arrive in.
  runtime.subscribe(SUPPRESSION_CHANGED, async ({ data }) => {
    const { tenant_id, address } = data as SuppressionChanged;
    const current = await actor(runtime, recipientActor, recipientActorId(tenant_id, address)).check(undefined);
    if (current) await deps.catalog.putSuppression(current);
    else await deps.catalog.deleteSuppression(tenant_id, address);
  });

  // Webhooks: each lifecycle event goes to the actor of every enabled endpoint subscribed to it
  // (enqueue is idempotent by evt_ id: pub/sub may deliver twice); attempts run in the lanes.
  const webhooks = deps.webhooks ?? defaultWebhookSettings();
  runtime.register(webhookActor({ catalog: deps.catalog, ...webhooks }));
  const poster = new WebhookPoster(webhooks.guard, { socketsPerDestination: PER_ENDPOINT });
  const lanes = new WebhookLanes({ invoker: runtime, catalog: deps.catalog, poster, timeoutMs: webhooks.timeoutMs, log });
  runtime.subscribe(
    EMAIL_EVENTS,
    async ({ data }) => {
      const { tenant_id, event } = data as EmailEvent;
      const endpoints = await deps.catalog.webhooksFor(tenant_id, event.type);
      await Promise.all(
        endpoints.map(async (e) => {
          // Handed straight to this process's lanes: no publication, one commit less per delivery.
          const { enqueued } = await webhookClient(runtime, e.id).enqueue({ tenant_id, event, publish: false });
          // Draining, the lanes take nothing: the event's watchdog reminder brings it back.
          if (enqueued && !lanes.draining) lanes.push(e.id, event.id);
        }),
      );
    },
    {
      // Most tenants have no endpoint for most events: such an event costs no outbox row.
      wants: (data) => {
        const { tenant_id, event } = data as EmailEvent;
        return deps.catalog.hasWebhooksFor(tenant_id, event.type) ?? true;
      },
    },
  );
  runtime.subscribe(WEBHOOK_DUE, async ({ data }) => {
    const { endpoint_id, event_id } = data as WebhookDue;
    lanes.push(endpoint_id, event_id);
  });
  return {
    async drain() {
      await lanes.drain();
      poster.close();
    },
  };
}

function openCatalog(config: Config): Promise<Catalog> {
  if (config.runtime === 'embedded') return Promise.resolve(new SqliteCatalog(join(config.dataDir, 'catalog.db')));
  return PgCatalog.open(config.databaseUrl!, { onError: (error) => log('catalog connection failed', error) });
}

function openRuntime(config: Config): ActorRuntime {
  if (config.runtime === 'embedded') return new EmbeddedRuntime({ file: join(config.dataDir, 'actors.db'), log });
  return new DaprRuntime({
    daprHttpPort: config.daprHttpPort,
    // Only a process that hosts actors serves Dapr's callbacks.
    appPort: config.role === 'ingress' ? null : config.appPort,
    pubsub: config.pubsub,
    log,
  });
}

export async function startGatepost(config: Config): Promise<Gatepost> {
  const hostsActors = config.role !== 'ingress';
  const servesApi = config.role !== 'actors';
  const catalog = await openCatalog(config);
  const runtime = openRuntime(config);
  const relay = hostsActors && config.smtpRelay ? smtpRelay(config.smtpRelay) : null;
  const guard = new SsrfGuard({ allow: config.webhookAllow, dnsServers: config.dnsServers });
  // Deliveries must never reach Gatepost's own API or its Dapr sidecar on this machine.
  guard.protectPorts(config.port, ...(config.runtime === 'dapr' ? [config.daprHttpPort, config.appPort] : []));
  const actors = hostsActors
    ? registerActors(runtime, {
        catalog,
        relay,
        retrySchedule: config.deliveryRetrySchedule,
        webhooks: {
          guard,
          retrySchedule: config.webhookRetrySchedule,
          timeoutMs: config.webhookTimeoutMs,
          disableAfterMs: config.webhookDisableAfterMs,
        },
      })
    : null;

  const keys = new KeyRing(catalog);
  const gate = createGate({ invoker: runtime, catalog });
  let ready = false;
  const rest = servesApi
    ? restServer({
        gate,
        invoker: runtime,
        catalog,
        keys,
        webhookGuard: guard,
        adminToken: config.adminToken,
        http: config.http,
        ready: () => ready,
        version: VERSION,
        log,
      })
    : null;

  const tls = servesApi
    ? await submissionTls({ configured: config.smtpTls, dataDir: config.dataDir, hostname: config.hostname })
    : null;
  const smtp = tls ? submissionServer({ gate, keys, log, tls, hostname: config.hostname }) : null;

  await runtime.start();
  const bootstrap = servesApi ? await bootstrapDefaultTenant(catalog, keys, config.hostname) : null;
  const address = rest ? await rest.app.listen({ port: config.port, host: config.host }) : null;
  if (address) guard.protectPorts(Number(new URL(address).port));
  const smtpAddress = smtp ? await smtp.listen(config.smtpPort, config.smtpHost) : null;
  if (smtpAddress) guard.protectPorts(smtpAddress.port);
  ready = true;

  let stopping: Promise<void> | null = null;
  return {
    url: address && address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
    smtp: smtpAddress && { ...smtpAddress, selfSignedCert: tls!.selfSignedPath },
    runtime,
    catalog,
    firstStartKeys: bootstrap ? { tenant_id: bootstrap.tenant.id, live: bootstrap.live, sandbox: bootstrap.sandbox } : null,
    stop() {
      stopping ??= (async () => {
        ready = false;
        await Promise.all([rest?.drain(), smtp?.drain()]);
        await actors?.drain();
        await runtime.stop();
        relay?.close();
        await catalog.close();
      })();
      return stopping;
    },
  };
}
