// The HTTP server of the native API: Fastify, every route of ingress/rest, and the mapping of
// every failure to the native error body.
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Gate, VerifiedSenders } from '../../gate/gate.ts';
import type { Invoker, Publisher } from '../../runtime/runtime.port.ts';
import { DEFAULT_HTTP_LIMITS, loadConfig, type HttpLimits } from '../../config/config.ts';
import { reputations, type WarmupSettings } from '../../gate/reputation.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { Domains } from '../../tenancy/domains.ts';
import type { EventFeed } from '../../events/event.feed.ts';
import type { KeyRing } from '../../tenancy/keys.ts';
import { SsrfGuard } from '../../webhooks/ssrf.guard.ts';
import { adminRoutes } from './admin.route.ts';
import { domainAdminRoutes, domainRoutes } from './domains.route.ts';
import { inboundRoutes } from './inbound.route.ts';
import { audienceRoutes } from './audiences.route.ts';
import { broadcastRoutes } from './broadcasts.route.ts';
import { broadcasts } from '../../gate/broadcasts.ts';
import type { InboundRoutes } from '../../tenancy/inbound.routes.ts';
import { emailRoutes } from './emails.route.ts';
import { customEventRoutes, eventRoutes } from './events.route.ts';
import { automationRoutes } from './automations.route.ts';
import { automationTriggers } from '../../gate/automations.ts';
import { every } from '../../lib/every.ts';
import { jwksRoutes, receiptAdminRoutes, receiptRoutes, type ReceiptKeyRing } from './receipts.route.ts';
import { messageRoutes } from './messages.route.ts';
import { metricsRoutes, type MetricsSource } from './metrics.route.ts';
import { RequestLog, lazyRequestLogger, requestIdOf } from '../../ops/log.ts';
import {
  AUTH_FAILURES_PER_MINUTE,
  AUTH_FAILURE_WINDOW_MS,
  type AuthFailures,
  authenticateIn,
  authenticateKey,
  checkAdmin,
  permissionHook,
  refuseControlCharactersIn,
  type Access,
} from './auth.hooks.ts';
import { codedError, sendError } from './errors.http.ts';
import { refuseNulInJson } from './json.body.ts';
import { registerOpenApi } from './openapi.swagger.ts';
import { serializerCompiler, validatorCompiler, withZod } from './schema.http.ts';
import { reputationAdminRoutes, reputationRoutes } from './reputation.route.ts';
import { sourceIpAdminRoutes } from './source.ips.route.ts';
import { sourceIps } from '../../gate/source.ips.ts';
import { queueAdminRoutes, queueRoutes, type QueueSource } from './queue.route.ts';
import { sandboxRoutes } from './sandbox.route.ts';
import { suppressionRoutes } from './suppressions.route.ts';
import { reportAdminRoutes, reportRoutes } from './reports.route.ts';
import { systemRoutes } from './system.route.ts';
import { templateRoutes } from './templates.route.ts';
import { trackingRoutes } from './tracking.route.ts';
import { Tracking } from '../../gate/tracking.ts';
import { validateRoutes, type MailHostLookup } from './validate.route.ts';
import { webhookRoutes } from './webhooks.route.ts';
import { compatIngresses } from '../compat/compat.registry.ts';
import { docsPlugin } from '../docs/docs.plugin.ts';
import { loadDocs } from '../docs/docs.pages.ts';
import { inboxRoutes } from '../inbox/inbox.routes.ts';
import type { EventEmitter } from 'node:events';

/** How long a drain waits for requests under way before it closes their connections anyway. */
const DRAIN_MS = 30_000;

/** A server given no queue (route tests) shows an empty one. */
const noQueue: QueueSource = () => [];

/** Request bodies larger than this are refused with 413 before they are parsed. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The longest path segment the router matches (Fastify's maxParamLength default). */
const MAX_PATH_SEGMENT = 100;

export interface RestDeps {
  gate: Gate;
  invoker: Invoker;
  /** Where the opens and clicks the tracking routes take are published, many at a time. */
  publisher: Publisher;
  catalog: Catalog;
  keys: KeyRing;
  /** The operator's delivery receipt keys: their JWKS, and rotation. */
  receiptKeys: ReceiptKeyRing;
  /** Sending domains: their routes, and the verified-sender answer the gate was given. */
  domains: Domains;
  /** The gate's rule for live senders (null: any from domain), which a broadcast is held to before it is sent; none: null. */
  senders?: VerifiedSenders | null;
  /** The warmup settings the actors run with (GATEPOST_WARMUP*), so a domain shows the caps it is held to; off when not given. */
  warmup?: WarmupSettings;
  /** The source addresses direct delivery connects from (GATEPOST_SOURCE_IPS), for the admin's view; none when not given. */
  sourceIps?: string[];
  /** Inbound routes, and the base of the URLs received messages are served at; none: no /v1/inbound routes. */
  inbound?: { routes: InboundRoutes; publicUrl: () => string };
  /**
   * The tenant event feed, where this process fans events out (it hosts actors): GET /v1/events
   * is served only then; an ingress-only process has no events to serve.
   */
  events?: EventFeed;
  /** Where a domain's mail goes, for POST /v1/validate: the cached MX look-up through GATEPOST_DNS_SERVERS. */
  mailHost: MailHostLookup;
  /** Checks webhook URLs (GATEPOST_WEBHOOK_ALLOW, GATEPOST_DNS_SERVERS); by default nothing non-public is allowed. */
  webhookGuard?: SsrfGuard;
  adminToken: string | null;
  /** The fair queue GET /v1/queue and /v1/admin/queue show (app/queue.shared.ts); empty when not given. */
  queue?: QueueSource;
  /** Emits a tenant's id when this process captures a sandbox message of it (the inbox's live updates). */
  captures?: EventEmitter;
  /** How long a client may take; the defaults of config.ts when not given. */
  http?: HttpLimits;
  ready: () => boolean;
  version: string;
  /** GET /metrics answers from it; none: no such route. */
  metrics?: MetricsSource;
  /** Where the line of each request goes (ops/log.ts); none: no request is logged. */
  logger?: FastifyBaseLogger;
  log: (message: string, error?: unknown) => void;
}

/** A route's URL (`/v3/:domain/messages`) as a pattern its request paths match, whatever a parameter holds. */
function urlPattern(url: string): RegExp {
  const escaped = url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]*');
  return new RegExp(`^${escaped}$`);
}

export interface RestServer {
  app: FastifyInstance;
  /** Stops taking requests, answers every request under way, then closes every connection. */
  drain(): Promise<void>;
  /** Every method and URL Fastify serves, as registered (HEAD twins of GET routes, and routes hidden from the OpenAPI document: the docs' pages, the inbox's, left out). */
  served: { method: string; url: string }[];
  /** The native routes, with who may call each (their config's access). */
  routes: { method: string; url: string; access: Access }[];
}

/** How often the contact-added runs a crash left owed are looked for (gate/automations.ts). */
const SWEEP_EVERY_MS = 5_000;

export function restServer(deps: RestDeps): RestServer {
  const limits = deps.http ?? DEFAULT_HTTP_LIMITS;
  const compat = compatIngresses(deps);
  const warmup = deps.warmup ?? { ...loadConfig({}).warmup, enabled: false };
  const breakers = reputations(deps.invoker, warmup);
  const tracking = new Tracking({ invoker: deps.invoker, publisher: deps.publisher, catalog: deps.catalog, log: deps.log });
  const triggers = automationTriggers(deps.invoker, deps.catalog);
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    // One line per request, with its id: the client's x-request-id, or one made here.
    logController: new RequestLog(),
    childLoggerFactory: lazyRequestLogger,
    genReqId: requestIdOf,
    bodyLimit: MAX_BODY_BYTES,
    return503OnClosing: true,
    // A connection silent this long is closed, whether it sent nothing yet or waits mid-request.
    connectionTimeout: limits.requestTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    // Node checks the headers and request timeouts on this interval (30 s by default, which
    // would let a slow client hold a connection well past a shorter limit).
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    // The router's refusals (a path segment over its 100 characters, a URL that does not
    // decode) come before any route or scope: in the format of the style whose URL it is (the
    // native one by default), not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      const refused = new GatepostError(
        'invalid_request',
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? `A path segment is over ${MAX_PATH_SEGMENT} characters.`
          : 'The URL is not validly percent-encoded.',
      );
      const path = request.url.split('?')[0]!;
      const style = compat.find((c) => c.refuseUrl?.urls.some((url) => urlPattern(url).test(path)));
      return style?.refuseUrl ? style.refuseUrl.answer(reply, refused) : sendError(reply, refused);
    },
  });
  refuseNulInJson(app);
  const sweeping = every(
    SWEEP_EVERY_MS,
    () => triggers.sweepContactTriggers(),
    (error) => deps.log('the owed contact-added runs could not be started; the next sweep tries again', error),
  );
  app.addHook('onClose', () => sweeping.stop());
  const served: RestServer['served'] = [];
  const routes: RestServer['routes'] = [];
  let underWay = 0;
  const answered = () => underWay--;
  // A callback hook and one shared listener: an async hook costs a promise, and `once` a wrapper,
  // on every request.
  app.addHook('onRequest', (request, reply, done) => {
    underWay++;
    // The client can name the request when it reports a problem; the log lines name it too.
    reply.header('x-request-id', request.id);
    // 'close' comes once per response, whether it was sent or the client went away first.
    reply.raw.on('close', answered);
    done();
  });
  app.addHook('onRoute', (r) => {
    // The inbox's pages, assets and streams are for a browser, not the API: hidden from the document.
    if ((r.schema as { hide?: boolean } | undefined)?.hide) return;
    for (const method of [r.method].flat()) {
      if (method === 'HEAD') continue;
      served.push({ method, url: r.url });
    }
  });
  // JSON only: a text/plain body would otherwise reach validation as a string.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('sender', null);
  // Before every route, so that each is in the document.
  registerOpenApi(app, deps.version);
  // Used only by the authentication hooks (authenticateIn), to count failures per client address.
  app.register(rateLimit, { global: false, max: AUTH_FAILURES_PER_MINUTE, timeWindow: AUTH_FAILURE_WINDOW_MS });
  app.decorate('authFailures', { lastAt: -Infinity } satisfies AuthFailures);
  // Each kind of access in its own encapsulated scope, whose onRequest hooks authenticate (and,
  // for keys, check the route's permission) before the body is read.
  /** What every native scope shares: its routes are listed in `routes`, and refuse control characters in their paths. */
  const native = (scope: FastifyInstance) => {
    scope.addHook('onRoute', (r) => {
      for (const method of [r.method].flat())
        if (method !== 'HEAD') routes.push({ method, url: r.url, access: r.config!.access! });
    });
    refuseControlCharactersIn(scope);
  };
  app.register(async (open) => {
    native(open);
    systemRoutes(withZod(open), { ready: deps.ready });
    if (deps.metrics) metricsRoutes(withZod(open), deps.metrics);
    jwksRoutes(withZod(open), deps.receiptKeys);
  });
  // The links in sent mail: their own scope, which takes any body (a one-click POST is a form).
  // They write no request line (warnings and errors only): their URLs hold the tokens that
  // unsubscribe a reader, which no log should keep, and each hit is an event on its message's
  // timeline already. The line was also a sixth of a click's CPU (bench:tracking profile).
  app.register(
    async (links) => {
      native(links);
      trackingRoutes(withZod(links), tracking);
    },
    { logLevel: 'warn' },
  );
  app.register(async (keyed) => {
    native(keyed);
    authenticateIn(keyed, async (request) => {
      request.sender = await authenticateKey(deps.keys, request);
    });
    keyed.addHook('onRequest', permissionHook);
    const scope = withZod(keyed);
    emailRoutes(scope, deps.gate);
    messageRoutes(scope, deps);
    receiptRoutes(scope, deps);
    templateRoutes(scope, deps.catalog);
    suppressionRoutes(scope, deps.invoker, deps.catalog);
    reportRoutes(scope, deps.catalog);
    sandboxRoutes(scope, deps.catalog);
    domainRoutes(scope, deps.domains, breakers);
    reputationRoutes(scope, breakers);
    queueRoutes(scope, deps.queue ?? noQueue);
    validateRoutes(scope, deps.gate, deps.mailHost);
    // In a scope of their own: their text/csv parser hands the import its request stream.
    keyed.register(async (audiences) => audienceRoutes(withZod(audiences), deps.catalog, triggers));
    automationRoutes(scope, deps.catalog, triggers);
    customEventRoutes(scope, triggers);
    broadcastRoutes(scope, broadcasts({ invoker: deps.invoker, catalog: deps.catalog, senders: deps.senders ?? null }));
    if (deps.inbound) inboundRoutes(scope, { ...deps.inbound, catalog: deps.catalog });
    if (deps.events) eventRoutes(scope, deps.events);
    webhookRoutes(scope, { invoker: deps.invoker, catalog: deps.catalog, guard: deps.webhookGuard ?? new SsrfGuard() });
  });
  const { adminToken } = deps;
  // The admin API exists only with a token.
  if (adminToken) {
    app.register(async (admin) => {
      native(admin);
      authenticateIn(admin, async (request) => checkAdmin(adminToken, request));
      adminRoutes(withZod(admin), deps.catalog, deps.keys);
      reportAdminRoutes(withZod(admin), deps.catalog);
      receiptAdminRoutes(withZod(admin), deps.receiptKeys);
      reputationAdminRoutes(withZod(admin), breakers, deps.catalog);
      domainAdminRoutes(withZod(admin), breakers, deps.catalog);
      queueAdminRoutes(withZod(admin), deps.queue ?? noQueue);
      sourceIpAdminRoutes(withZod(admin), sourceIps(deps.invoker, deps.sourceIps ?? [], warmup));
    });
  }
  // The hosted capture inbox: a web UI signed in to with a sandbox key, then a session cookie.
  app.register(async (inbox) => {
    refuseControlCharactersIn(inbox);
    await inboxRoutes(inbox, { catalog: deps.catalog, keys: deps.keys, invoker: deps.invoker, captures: deps.captures });
  });
  // Each style in its own encapsulated scope: its parsers and error handler stay its own.
  for (const c of compat) app.register(c.plugin);
  // The docs' pages, rendered once here; open to anyone.
  app.register(docsPlugin, { docs: loadDocs() });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new GatepostError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)),
  );
  app.setErrorHandler((error, _request, reply) =>
    sendError(
      reply,
      codedError(
        error,
        {
          tooLarge: `The request body is over ${MAX_BODY_BYTES} bytes.`,
          contentType: 'Send the body as JSON with "Content-Type: application/json".',
        },
        deps.log,
      ),
    ),
  );
  async function drain(): Promise<void> {
    const closed = app.close();
    // Node closes idle keep-alive connections at once, but a connection holding no request
    // under way can linger (seen under load, a client caught mid-request): once every request
    // that reached a handler is answered, close whatever is left.
    const deadline = Date.now() + DRAIN_MS;
    while (underWay > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    app.server.closeAllConnections();
    await closed;
    // The opens and clicks answered last are recorded before the runtime stops.
    await tracking.flush();
  }
  return { app, served, routes, drain };
}
