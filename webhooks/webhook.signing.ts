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
// Signing itself is the SDK's (sdk/node/webhooks.ts), so that the CLI's `listen` signs the events
// it forwards exactly as deliveries are signed.
export { newSecret, SECRET_PREFIX, signatureHeaders, type Signable } from '../sdk/node/webhooks.ts';

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
