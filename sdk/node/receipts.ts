// Verifying Gatepost's signed delivery receipts, with no call to Gatepost: a receipt is a compact
// JWS (EdDSA over Ed25519) checked against the operator's JWK Set (`/.well-known/jwks.json`).
// This file stands alone (it imports `jose` and node:crypto, nothing else): copy it, or import it
// from the SDK module (sdk/node/index.ts). docs/receipts.md gives the format byte for byte.
//
// A tenant's receipts form a chain: receipt n carries `seq: n` and `prev`, the lowercase hex
// SHA-256 of the payload bytes of receipt n-1 (null on the first). verifyReceiptChain checks the
// links, so a receipt changed, deleted from the middle, or moved is found.
import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';

/** The JWS `typ` of a receipt. */
export const RECEIPT_TYP = 'gatepost-receipt+jws';

/** A receipt's payload. */
export interface ReceiptClaims {
  /** `rcp_…` */
  id: string;
  tenant_id: string;
  /** 1 for the tenant's first receipt, then one more each receipt. */
  seq: number;
  /** Lowercase hex SHA-256 of the previous receipt's payload bytes; null on the first. */
  prev: string | null;
  /** `msg_…` */
  message_id: string;
  /** The Message-ID header, angle brackets included. */
  message_id_header: string;
  attempt: number;
  /** Lowercase hex SHA-256 of the exact bytes sent (after DKIM signing). */
  sha256: string;
  dkim: { d: string; s: string[] } | null;
  envelope: { from: string; to: string };
  mx: string | null;
  ip: string | null;
  tls: { version: string; cipher: string } | null;
  reply: { code: number | null; enhanced: string | null; text: string };
  connected_at: string | null;
  accepted_at: string | null;
  issued_at: string;
}

export type ReceiptFailure =
  'malformed' | 'unknown_key' | 'invalid_signature' | 'tenant_mismatch' | 'out_of_order' | 'sequence_gap' | 'chain_broken';

export class ReceiptVerificationError extends Error {
  constructor(
    readonly reason: ReceiptFailure,
    message: string,
    /** In a chain: the position of the receipt that failed. */
    readonly index?: number,
  ) {
    super(message);
    this.name = 'ReceiptVerificationError';
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The chain hash of a receipt: lowercase hex SHA-256 of its payload bytes (the JWS's middle part, decoded). */
export function receiptHash(jws: string): string {
  const payload = jws.split('.')[1] ?? '';
  return createHash('sha256').update(Buffer.from(payload, 'base64url')).digest('hex');
}

function claimsOf(payload: Uint8Array): ReceiptClaims {
  let claims: ReceiptClaims;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload)) as ReceiptClaims;
  } catch {
    throw new ReceiptVerificationError('malformed', 'The receipt payload is not JSON.');
  }
  const ok =
    typeof claims === 'object' &&
    claims !== null &&
    typeof claims.id === 'string' &&
    claims.id.startsWith('rcp_') &&
    typeof claims.tenant_id === 'string' &&
    Number.isSafeInteger(claims.seq) &&
    claims.seq >= 1 &&
    (claims.prev === null || (typeof claims.prev === 'string' && HEX64.test(claims.prev))) &&
    (claims.seq === 1) === (claims.prev === null) &&
    typeof claims.sha256 === 'string' &&
    HEX64.test(claims.sha256);
  if (!ok) throw new ReceiptVerificationError('malformed', 'The receipt payload does not have the fields of a receipt.');
  return claims;
}

/**
 * Checks a receipt's signature against the JWK Set and answers its claims. Throws a
 * ReceiptVerificationError (with a `reason`) when it is not a receipt, names no key of the set,
 * or its signature does not match.
 */
export async function verifyReceipt(jws: string, jwks: JSONWebKeySet): Promise<ReceiptClaims> {
  let verified: Awaited<ReturnType<typeof compactVerify>>;
  try {
    verified = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
      throw new ReceiptVerificationError('invalid_signature', 'The receipt signature does not match.');
    if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS')
      throw new ReceiptVerificationError('unknown_key', 'The receipt names no single key of the JWK Set.');
    throw new ReceiptVerificationError('malformed', `Not a receipt: ${(error as Error).message}`);
  }
  if (verified.protectedHeader.typ !== RECEIPT_TYP)
    throw new ReceiptVerificationError('malformed', `Not a receipt: its typ is not "${RECEIPT_TYP}".`);
  return claimsOf(verified.payload);
}

/**
 * Verifies each receipt (verifyReceipt) and the links between them: receipts of one tenant, in
 * order of `seq`, consecutive, each `prev` the hash of the one before. The first receipt given
 * may be any of the chain; only one with `seq: 1` is known to have nothing before it, and a
 * receipt removed after the last one given cannot be seen. Answers the claims, in order.
 */
export async function verifyReceiptChain(receipts: string[], jwks: JSONWebKeySet): Promise<ReceiptClaims[]> {
  const out: ReceiptClaims[] = [];
  for (const [i, jws] of receipts.entries()) {
    let claims: ReceiptClaims;
    try {
      claims = await verifyReceipt(jws, jwks);
    } catch (error) {
      const e = error as ReceiptVerificationError;
      throw new ReceiptVerificationError(e.reason, `Receipt ${i}: ${e.message}`, i);
    }
    const before = out[i - 1];
    if (before) {
      if (claims.tenant_id !== before.tenant_id)
        throw new ReceiptVerificationError('tenant_mismatch', `Receipt ${i} is of another tenant than receipt ${i - 1}.`, i);
      if (claims.seq <= before.seq)
        throw new ReceiptVerificationError('out_of_order', `Receipt ${i} (seq ${claims.seq}) comes after seq ${before.seq}.`, i);
      if (claims.seq !== before.seq + 1) {
        const missing = claims.seq - before.seq - 1;
        throw new ReceiptVerificationError(
          'sequence_gap',
          `${missing} receipt${missing === 1 ? '' : 's'} missing between seq ${before.seq} and seq ${claims.seq}.`,
          i,
        );
      }
      if (claims.prev !== receiptHash(receipts[i - 1]!))
        throw new ReceiptVerificationError('chain_broken', `Receipt ${i} does not link to receipt ${i - 1}.`, i);
    }
    out.push(claims);
  }
  return out;
}
