// Verifying a Gatepost webhook delivery on the receiving side, with no call to Gatepost (and, at
// the end, signing one as Gatepost does). This file stands alone (it imports node:crypto and nothing else): copy it, or import it from the
// SDK module (sdk/node/index.ts).
//
//   x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]
//   v1 = hex(HMAC-SHA256(key = the secret as given, "whsec_…", as UTF-8; message = "<t>.<raw body>"))
//
// Several v1 values appear while a secret rotates (one per secret in force): any one matching
// any of your secrets is enough. A timestamp more than `toleranceSeconds` (default 300) away
// from now is refused, so a captured delivery cannot be replayed later.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export type VerificationFailure =
  'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'no_matching_signature' | 'invalid_payload';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** The event envelope a delivery carries. */
export interface WebhookEvent<D = Record<string, unknown>> {
  id: string;
  type: string;
  created_at: string;
  data: D;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The raw request body, byte for byte as received: not a re-serialised JSON object. */
  payload: string | Uint8Array;
  /** The request headers: a fetch `Headers`, or Node's `req.headers`. */
  headers: HeaderBag;
  /** The endpoint secret (`whsec_…`), or several (the old and the new one during a rotation). */
  secret: string | string[];
  toleranceSeconds?: number;
  /** The time to check the timestamp against (tests); default now. */
  now?: Date | number;
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value.join(',') : value;
}

/** Hex HMAC-SHA256 of `<t>.<payload>` under `secret`: what `v1` holds. */
export function computeSignature(secret: string, timestamp: number | string, payload: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest('hex');
}

/**
 * Checks a delivery's `x-service-signature` and answers the event it carries. Throws a
 * WebhookVerificationError (with a `reason`) when the signature is missing, malformed, too old
 * or too new, or matches none of the secrets.
 */
export function verifyWebhook<D = Record<string, unknown>>(opts: VerifyOptions): WebhookEvent<D> {
  const value = header(opts.headers, SIGNATURE_HEADER);
  if (!value) throw new WebhookVerificationError('missing_signature', `No ${SIGNATURE_HEADER} header.`);
  let t: number | null = null;
  const given: string[] = [];
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    const [k, v] = [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    if (k === 't' && /^\d+$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) given.push(v);
  }
  if (t === null || given.length === 0) {
    throw new WebhookVerificationError('malformed_signature', `${SIGNATURE_HEADER} must be "t=<unix>,v1=<hex>[,v1=<hex>]".`);
  }
  const now = Math.floor(Number(opts.now ?? Date.now()) / 1000);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - t) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `The timestamp ${t} is more than ${tolerance} s from now.`);
  }
  const secrets = Array.isArray(opts.secret) ? opts.secret : [opts.secret];
  let match = false;
  // Every pair is compared (no early exit), each in constant time.
  for (const secret of secrets) {
    const expected = Buffer.from(computeSignature(secret, t, opts.payload), 'hex');
    for (const v1 of given) if (timingSafeEqual(expected, Buffer.from(v1, 'hex'))) match = true;
  }
  if (!match) throw new WebhookVerificationError('no_matching_signature', 'No v1 signature matches the secret.');
  try {
    const text = typeof opts.payload === 'string' ? opts.payload : Buffer.from(opts.payload).toString('utf8');
    return JSON.parse(text) as WebhookEvent<D>;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The signed payload is not JSON.');
  }
}

// Signing, as Gatepost signs each delivery, and as `gatepost listen` signs the events it forwards:
// the headers above, and the Standard Webhooks ones from the same secret
// (webhook-signature: v1,<base64 HMAC-SHA256(key = the base64 text after "whsec_", decoded,
// message = "<evt id>.<t>.<body>")>).

export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and 24 random bytes in base64 (32 characters, no padding). */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

/** The Standard Webhooks key of a secret: the bytes its base64 part stands for. */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export interface Signable {
  eventId: string;
  eventType: string;
  /** The raw request body, exactly as sent. */
  body: string;
  /** The secrets in force, current first: one signature each. */
  secrets: string[];
  /** Unix time in seconds. */
  timestamp: number;
}

/** The headers of a signed delivery. */
export function signatureHeaders({ eventId, eventType, body, secrets, timestamp: t }: Signable): Record<string, string> {
  const v1 = secrets.map((s) => `v1=${computeSignature(s, t, body)}`);
  const standard = secrets.map(
    (s) => `v1,${createHmac('sha256', standardKey(s)).update(`${eventId}.${t}.${body}`).digest('base64')}`,
  );
  return {
    [SIGNATURE_HEADER]: [`t=${t}`, ...v1].join(','),
    'x-service-timestamp': String(t),
    'x-service-event': eventType,
    'webhook-id': eventId,
    'webhook-timestamp': String(t),
    'webhook-signature': standard.join(' '),
  };
}
