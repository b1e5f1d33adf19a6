// Signing in to the capture inbox's web UI. A sandbox key is given once, in a form; the browser
// then holds a random session token in an HttpOnly, SameSite=Strict cookie (Secure over https),
// and the catalog holds only the token's SHA-256, so any replica of the API reads the session and
// the key never travels again. A session ends when it expires, on sign-out, or the moment its
// key is revoked (each request reads the key with the session).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Sender } from '../../gate/gate.ts';
import { randomToken, sha256Hex } from '../../lib/ids.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { KeyRing } from '../../tenancy/keys.ts';

export const SESSION_COOKIE = 'gatepost_inbox';
/** How long a session lasts, signed in or not in use. */
const SESSION_SECONDS = 12 * 3600;
/** The cookie goes only to the inbox's own paths. */
const COOKIE_PATH = '/inbox';

export const noSession = () =>
  new GatepostError('missing_api_key', 'Not signed in to the capture inbox, or the session ended: sign in at /inbox.');

/** Checks the key and opens a session for it; answers the session token. Only a sandbox key may sign in. */
export async function openSession(catalog: Catalog, keys: KeyRing, secret: string): Promise<string> {
  const { key } = await keys.resolve(secret);
  if (key.kind !== 'sandbox') {
    throw new GatepostError(
      'key_not_allowed',
      `Only a sandbox key (gp_sandbox_…) signs in to the capture inbox; this is a ${key.kind} key.`,
    );
  }
  const token = randomToken(32);
  const expires_at = new Date(Date.now() + SESSION_SECONDS * 1000).toISOString();
  await catalog.createInboxSession({ hash: sha256Hex(token), key_id: key.id, expires_at });
  return token;
}

const tokenOf = (request: FastifyRequest): string | undefined => request.cookies[SESSION_COOKIE];

/** The signed-in key and its tenant; null without a live session. */
export async function sessionSender(catalog: Catalog, request: FastifyRequest): Promise<Sender | null> {
  const token = tokenOf(request);
  if (!token) return null;
  const key = await catalog.inboxSessionKey(sha256Hex(token));
  const tenant = key && (await catalog.getTenant(key.tenant_id));
  return key && tenant ? { key, tenant } : null;
}

export async function closeSession(catalog: Catalog, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const token = tokenOf(request);
  if (token) await catalog.deleteInboxSession(sha256Hex(token));
  reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    // Secure whenever the request came over https (a TLS-terminating proxy: see docs/inbox.md).
    secure: request.protocol === 'https',
    maxAge: SESSION_SECONDS,
  });
}
