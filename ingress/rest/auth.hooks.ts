// Authentication and authorisation as onRequest hooks, one per encapsulated scope (native keys,
// admin, each compatibility style), and the checks every native route shares before validation.
import type {} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Sender } from '../../gate/gate.ts';
import type { KeyRing } from '../../tenancy/keys.ts';
import { requirePermission, type Permission } from '../../tenancy/permissions.ts';

/** Who may call a route: a key holding the permission, the admin token, or anyone. */
export type Access = Permission | 'admin' | 'none';

declare module 'fastify' {
  interface FastifyInstance {
    /** When an authentication last failed on this server (authenticateIn's, shared by every scope). */
    authFailures: AuthFailures;
  }
  interface FastifyRequest {
    /** The key's sender, set by the authentication hook of a keyed scope; null elsewhere. */
    sender: Sender | null;
  }
  interface FastifyContextConfig {
    /** Who may call the route: the permission permissionHook checks, 'admin' or 'none'. */
    access?: Access;
  }
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : '';
}

export async function authenticateKey(keys: KeyRing, request: FastifyRequest): Promise<Sender> {
  const secret = bearer(request);
  if (secret === null) throw new GatepostError('missing_api_key');
  if (secret === '') {
    throw new GatepostError('missing_api_key', 'The Authorization header must be "Bearer <API_KEY>".');
  }
  return keys.resolve(secret);
}

export function checkAdmin(adminToken: string, request: FastifyRequest): void {
  checkToken(adminToken, request, 'admin');
}

/** Checks the bearer token of an operator's route (`name`: `admin`, `metrics`) in constant time. */
export function checkToken(token: string, request: FastifyRequest, name: string): void {
  const given = Buffer.from(bearer(request) ?? '');
  const expected = Buffer.from(token);
  if (given.length === 0)
    throw new GatepostError('missing_api_key', `Send the ${name} token as "Authorization: Bearer <token>".`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new GatepostError('invalid_api_key', `The ${name} token is wrong.`);
  }
}

/** The sender a keyed scope's authentication hook set; a route outside such a scope has none. */
export function senderOf(request: FastifyRequest): Sender {
  if (!request.sender) throw new Error(`route ${request.routeOptions.url} has no key authentication`);
  return request.sender;
}

/** Failed authentications one client address may make a minute; then 429 until the minute is over. */
export const AUTH_FAILURES_PER_MINUTE = 20;

/** When an authentication last failed; decorated on the server with the rate-limit plugin. */
export interface AuthFailures {
  lastAt: number;
}

/** The rate limit's window (ms): a count of failures is forgotten this long after its first. */
export const AUTH_FAILURE_WINDOW_MS = 60_000;

/**
 * Installs a scope's authentication as an onRequest hook that counts failures (a missing or
 * wrong key or token) per client address with @fastify/rate-limit, registered on the server:
 * past the limit, every request of that address is refused before its credentials are looked at,
 * so a right guess is refused too. Every scope shares one count.
 *
 * No failure for a whole window means every count has expired: the look-up is skipped (about 3 us
 * of a send's event loop, a tenth of it normalising the address; bench/RESULTS.md, twenty-fifth
 * pass).
 */
export function authenticateIn(scope: FastifyInstance, authenticate: (request: FastifyRequest) => Promise<void>): void {
  // No options: the plugin's own (server.ts), and so its one store.
  const failures = scope.createRateLimit();
  const lastFailure = scope.authFailures;
  scope.addHook('onRequest', async (request) => {
    if (Date.now() - lastFailure.lastAt <= AUTH_FAILURE_WINDOW_MS) {
      const seen = await failures(request, { increment: false });
      if (!seen.isAllowed && seen.remaining === 0) {
        throw new GatepostError(
          'rate_limited',
          `Too many failed authentications from this address; retry in ${seen.ttlInSeconds} s.`,
          { retryAfter: seen.ttlInSeconds },
        );
      }
    }
    try {
      await authenticate(request);
    } catch (error) {
      if (error instanceof GatepostError && (error.code === 'missing_api_key' || error.code === 'invalid_api_key')) {
        lastFailure.lastAt = Date.now();
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
  const { access } = request.routeOptions.config;
  if (!access || access === 'admin' || access === 'none' || !request.sender) {
    throw new Error(`route ${request.routeOptions.url} has no permission or no sender`);
  }
  requirePermission(request.sender.key, access);
}

/**
 * A path parameter holding a control character names nothing Gatepost stores, and PostgreSQL
 * refuses a NUL in text outright (a 500 the fuzz suite found on the Dapr runtime): refused
 * before validation, before any store sees it.
 */
async function refuseControlCharacters(request: FastifyRequest): Promise<void> {
  for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && /[\u0000-\u001f\u007f]/.test(value)) {
      const details = [{ field: `path.${name}`, message: 'holds a control character' }];
      throw new GatepostError('invalid_request', `Invalid path: ${name} holds a control character.`, { details });
    }
  }
}

/** In a native scope: every route with path parameters refuses control characters in them (the others pay nothing). */
export function refuseControlCharactersIn(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.includes(':')) return;
    route.preValidation = [refuseControlCharacters, ...[route.preValidation ?? []].flat()];
  });
}
