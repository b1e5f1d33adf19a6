// CORS for the browser SDK endpoints, decided per key. A preflight (OPTIONS) carries no body, so
// no key: it is answered for any origin, and the key's allow-list is enforced on the request
// itself, before anything is sent. A refused origin gets 403 without Access-Control-Allow-Origin,
// so the page sees a CORS failure and learns nothing more. `sendForm` posts multipart, a "simple"
// request with no preflight at all: the check on the request is the one that counts either way.
// No credentials are ever allowed (the key is in the body or the Authorization header, never a cookie), and the allowed origin
// is echoed, never `*`, with `Vary: Origin` so caches keep answers for different origins apart.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import { ERROR_CODE_HEADER } from '../compat.errors.ts';
import { MESSAGE_ID_HEADER } from './browser.answer.ts';

/**
 * Headers a page may set: `send` posts JSON; an Idempotency-Key makes a retry safe; the native
 * send carries its public key as a bearer token.
 */
const ALLOWED_HEADERS = 'Content-Type, Idempotency-Key, Authorization';
/** Headers a page may read from the answer besides the text. */
const EXPOSED_HEADERS = ['Retry-After', 'Idempotent-Replayed', MESSAGE_ID_HEADER, ERROR_CODE_HEADER].join(', ');

/** Every answer of these endpoints may be read by the page that asked, unless its origin is refused. */
export function allowReading(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('Vary', 'Origin');
  const origin = request.headers.origin;
  if (origin === undefined) return;
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
}

export function withholdReading(reply: FastifyReply): void {
  reply.removeHeader('Access-Control-Allow-Origin');
  reply.removeHeader('Access-Control-Expose-Headers');
}

/** The preflight: the request may be made; whether this origin may use the key is decided on it. */
export function preflight(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (request.headers.origin !== undefined) {
    reply.header('Access-Control-Allow-Methods', 'POST');
    reply.header('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    reply.header('Access-Control-Max-Age', '600');
  }
  return reply.code(204).send();
}

/**
 * The key's allow-list against the request's Origin. An empty list allows any origin, and a
 * request without one (not a browser). A list only a browser can be held to: any other client
 * can name any Origin, which is why the per-key and per-IP rates exist besides.
 */
export function checkOrigin(allowed: string[], origin: string | undefined): void {
  if (allowed.length === 0 || (origin !== undefined && allowed.includes(origin))) return;
  throw new GatepostError(
    'origin_not_allowed',
    origin === undefined
      ? 'This key only sends from its allowed origins, and the request named none'
      : `This key does not send from ${origin}; add it to the key's allowed_origins`,
  );
}
