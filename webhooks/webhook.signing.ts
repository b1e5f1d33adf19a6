// How a delivery is signed (docs/webhooks.md gives the byte layout). Two sets of headers, from
// the same endpoint secret, one signature per secret in force (two while a secret rotates):
//
//   x-service-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>[,v1=<hex>]
//       the key is the secret string exactly as handed out (its UTF-8 bytes, "whsec_" included)
//   webhook-signature:   v1,<base64 HMAC-SHA256(key, "<evt id>.<t>.<body>")>[ v1,<base64>]
//       Standard Webhooks: the key is the base64 text after "whsec_", decoded
//
// The v1 layout is computed by the SDK's computeSignature, the function receivers verify with, so
// signing and verifying cannot drift apart. (The SDK imports nothing from the server.)
import { createHmac, randomBytes } from 'node:crypto';
import { computeSignature } from '../sdk/node/webhooks.ts';

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
  /** The secrets in force, current first. */
  secrets: string[];
  /** Unix time in seconds. */
  timestamp: number;
}

export function signatureHeaders({ eventId, eventType, body, secrets, timestamp: t }: Signable): Record<string, string> {
  const v1 = secrets.map((s) => `v1=${computeSignature(s, t, body)}`);
  const standard = secrets.map(
    (s) => `v1,${createHmac('sha256', standardKey(s)).update(`${eventId}.${t}.${body}`).digest('base64')}`,
  );
  return {
    'x-service-signature': [`t=${t}`, ...v1].join(','),
    'x-service-timestamp': String(t),
    'x-service-event': eventType,
    'webhook-id': eventId,
    'webhook-timestamp': String(t),
    'webhook-signature': standard.join(' '),
  };
}

/** What signing needs of an endpoint: its secret, and the one before its last rotation. */
export interface EndpointSecrets {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
}

/** The secrets that sign now: the current one, and the previous one until it expires. */
export function signingSecrets(endpoint: EndpointSecrets, now = Date.now()): string[] {
  const previous =
    endpoint.previous_secret && endpoint.previous_secret_expires_at && Date.parse(endpoint.previous_secret_expires_at) > now
      ? [endpoint.previous_secret]
      : [];
  return [endpoint.secret, ...previous];
}
