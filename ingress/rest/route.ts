// One way to declare a REST route: its zod schemas validate the request, describe it in the
// OpenAPI document, and type the handler. Coded errors become the wire format here, at the edge.
import type {} from '@fastify/rate-limit';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { GatepostError, errorCatalog, type ErrorDetail } from '../../errors/errors.catalog.ts';
import type { Sender } from '../../gate/gate.ts';
import type { KeyRing } from '../../tenancy/keys.ts';
import { requirePermission, type Permission } from '../../tenancy/permissions.ts';
import { IdempotencyKey } from './schemas.ts';

/** Who may call a route: a key holding the permission, the admin token, or anyone. */
export type Access = Permission | 'admin' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key's sender, set by the authentication hook of a keyed scope; null elsewhere. */
    sender: Sender | null;
  }
  interface FastifyContextConfig {
    /** The permission a keyed route needs, checked by permissionHook. */
    permission?: Permission;
  }
}

export interface RouteContext<B, P, Q> {
  body: B;
  params: P;
  query: Q;
  /** The authenticated sender; present on routes a key calls. */
  sender: Sender;
  request: FastifyRequest;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteDef<B extends z.ZodType, P extends z.ZodType, Q extends z.ZodType> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  summary: string;
  tag: string;
  access: Access;
  body?: B;
  /** Documents the body when validation is looser than the contract (a batch validates items one by one). */
  bodyDoc?: z.ZodType;
  params?: P;
  query?: Q;
  /** Status → description and body schema, for the OpenAPI document. */
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  handler: (ctx: RouteContext<z.output<B>, z.output<P>, z.output<Q>>) => Promise<RouteResult>;
}

export type AnyRoute = RouteDef<z.ZodType, z.ZodType, z.ZodType>;

export function route<B extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown>(
  def: RouteDef<B, P, Q>,
): AnyRoute {
  return def as unknown as AnyRoute;
}

/** `{"error": {"code", "message", "details"}}`, the native error body of DESIGN.md. */
export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(errorCatalog) as [keyof typeof errorCatalog, ...(keyof typeof errorCatalog)[]]),
      message: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ description: 'Every native error: a stable code, a human sentence, and the fields at fault.' });

export function zodDetails(error: z.ZodError, prefix = ''): ErrorDetail[] {
  const at = (path: PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join('.') || '(body)';
  return error.issues.flatMap((issue) =>
    // An unknown field is named itself, so the sender sees which one to remove.
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: at([...issue.path, key]), message: 'unknown field' }))
      : [{ field: at(issue.path), message: issue.message }],
  );
}

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const details = zodDetails(result.error, where === 'body' ? '' : where);
    throw new GatepostError('invalid_request', `Invalid ${where}: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, {
      details,
    });
  }
  return result.data;
}

/** The request's `Idempotency-Key` header, the one parser of it for every HTTP ingress; undefined when absent. */
export function idempotencyKeyHeader(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  return raw === undefined ? undefined : parseOrThrow(IdempotencyKey, raw, 'Idempotency-Key header');
}

/** How an ingress words Fastify's own refusals, in its callers' terms. */
export interface RefusalWords {
  /** A body (or, in a form, a file or the number of parts) over its limit. */
  tooLarge: string;
  /** A body sent with a content type the ingress does not take: what it takes. */
  contentType: string;
  /** A body that is not valid JSON; without it, Fastify's own message. */
  invalidJson?: string;
}

/**
 * The one error mapper of every HTTP ingress: any failure of a request as a coded error, which
 * each ingress then puts on the wire with its own table. A failure that is nobody's fault but
 * Gatepost's is logged and becomes internal_error.
 */
export function codedError(error: unknown, words: RefusalWords, log: (message: string, error?: unknown) => void): GatepostError {
  if (error instanceof GatepostError) return error;
  const e = error as FastifyError;
  if (e.statusCode === 413) return new GatepostError('message_too_large', words.tooLarge);
  if (e.statusCode === 415) return new GatepostError('invalid_request', words.contentType);
  if (words.invalidJson && (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')) {
    return new GatepostError('invalid_request', words.invalidJson);
  }
  if (e.statusCode && e.statusCode < 500) return new GatepostError('invalid_request', e.message);
  log('request failed', error);
  return new GatepostError('internal_error');
}

export function sendError(reply: FastifyReply, error: GatepostError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('Retry-After', String(error.retryAfter));
  const { code, message, details } = error.toBody();
  return reply.code(error.status).send({ error: { code, message, ...(details ? { details } : {}) } });
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : '';
}

export interface RouteDeps {
  keys: KeyRing;
  adminToken: string | null;
}

export async function authenticateKey(keys: KeyRing, request: FastifyRequest): Promise<Sender> {
  const secret = bearer(request);
  if (secret === null) throw new GatepostError('missing_api_key');
  if (secret === '') {
    throw new GatepostError('missing_api_key', 'The Authorization header must be "Bearer <API_KEY>".');
  }
  return keys.resolve(secret);
}

function checkAdmin(adminToken: string, request: FastifyRequest): void {
  const given = Buffer.from(bearer(request) ?? '');
  const expected = Buffer.from(adminToken);
  if (given.length === 0) throw new GatepostError('missing_api_key', 'Send the admin token as "Authorization: Bearer <token>".');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new GatepostError('invalid_api_key', 'The admin token is wrong.');
  }
}

/** Failed authentications one client address may make a minute; then 429 until the minute is over. */
export const AUTH_FAILURES_PER_MINUTE = 20;

/**
 * Installs a scope's authentication as an onRequest hook that counts failures (a missing or
 * wrong key or token) per client address with @fastify/rate-limit, registered on the server:
 * past the limit, every request of that address is refused before its credentials are looked at,
 * so a right guess is refused too. Every scope shares one count.
 */
export function authenticateIn(scope: FastifyInstance, authenticate: (request: FastifyRequest) => Promise<void>): void {
  // No options: the plugin's own (server.ts), and so its one store.
  const failures = scope.createRateLimit();
  scope.addHook('onRequest', async (request) => {
    const seen = await failures(request, { increment: false });
    if (!seen.isAllowed && seen.remaining === 0) {
      throw new GatepostError(
        'rate_limited',
        `Too many failed authentications from this address; retry in ${seen.ttlInSeconds} s.`,
        { retryAfter: seen.ttlInSeconds },
      );
    }
    try {
      await authenticate(request);
    } catch (error) {
      if (error instanceof GatepostError && (error.code === 'missing_api_key' || error.code === 'invalid_api_key')) {
        await failures(request);
      }
      throw error;
    }
  });
}

/**
 * The one check of what a key may do, for every keyed route of every scope: the route's config
 * names the permission, the scope's authentication hook has set request.sender.
 */
export async function permissionHook(request: FastifyRequest): Promise<void> {
  // No route: the scope's not-found handler answers, whatever the key may do.
  if (request.is404) return;
  const { permission } = request.routeOptions.config;
  if (!permission || !request.sender) throw new Error(`route ${request.routeOptions.url} has no permission or no sender`);
  requirePermission(request.sender.key, permission);
}

/**
 * A path parameter holding a control character names nothing Gatepost stores, and PostgreSQL
 * refuses a NUL in text outright (a 500 the fuzz suite found on the Dapr runtime): refused here,
 * for every route, before any store sees it.
 */
function refuseControlCharacters(params: unknown): void {
  for (const [name, value] of Object.entries((params ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && /[\u0000-\u001f\u007f]/.test(value)) {
      const details = [{ field: `path.${name}`, message: 'holds a control character' }];
      throw new GatepostError('invalid_request', `Invalid path: ${name} holds a control character.`, { details });
    }
  }
}

function serve(app: FastifyInstance, def: AnyRoute): void {
  app.route({
    method: def.method,
    url: def.url,
    ...(def.access !== 'admin' && def.access !== 'none' ? { config: { permission: def.access } } : {}),
    handler: async (request, reply) => {
      refuseControlCharacters(request.params);
      const ctx: RouteContext<unknown, unknown, unknown> = {
        body: def.body ? parseOrThrow(def.body, request.body, 'body') : request.body,
        params: def.params ? parseOrThrow(def.params, request.params, 'path') : request.params,
        query: def.query ? parseOrThrow(def.query, request.query, 'query') : request.query,
        get sender(): Sender {
          if (!request.sender) throw new Error(`route ${def.url} has no key authentication`);
          return request.sender;
        },
        request,
      };
      const result = await def.handler(ctx);
      if (result.headers) reply.headers(result.headers);
      reply.code(result.status);
      return result.body === undefined ? reply.send() : reply.send(result.body);
    },
  });
}

/**
 * Each kind of access in its own encapsulated scope, whose onRequest hooks authenticate (and, for
 * keys, check the route's permission) before the body is read.
 */
export function registerRoutes(app: FastifyInstance, routes: AnyRoute[], deps: RouteDeps): void {
  app.decorateRequest('sender', null);
  for (const def of routes.filter((r) => r.access === 'none')) serve(app, def);
  app.register(async (keyed) => {
    authenticateIn(keyed, async (request) => {
      request.sender = await authenticateKey(deps.keys, request);
    });
    keyed.addHook('onRequest', permissionHook);
    for (const def of routes.filter((r) => r.access !== 'admin' && r.access !== 'none')) serve(keyed, def);
  });
  const { adminToken } = deps;
  // The admin API exists only with a token.
  if (!adminToken) return;
  app.register(async (admin) => {
    authenticateIn(admin, async (request) => checkAdmin(adminToken, request));
    for (const def of routes.filter((r) => r.access === 'admin')) serve(admin, def);
  });
}
