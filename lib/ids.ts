// Prefixed ids (msg_, evt_, tpl_, ten_, key_). New ids start with the time, so ids made close
// together sort, and land, close together in the stores' B-trees.
import { createHash, hash, randomBytes, randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford's base32, lower case

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

// Random bytes drawn in blocks: one call into the CSPRNG per 256 ids, not one per id.
const pool = Buffer.alloc(2560);
let poolAt = pool.length;

/** A new id: 48 bits of milliseconds, then 80 random bits (26 characters after the prefix). */
export function newId(prefix: string): string {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(Date.now(), 0, 6);
  pool.copy(bytes, 6, poolAt, poolAt + 10);
  poolAt += 10;
  return `${prefix}_${base32(bytes).slice(0, 26)}`;
}

/** The same id every time for the same parts, e.g. a message id from (tenant, idempotency key). */
export function derivedId(prefix: string, ...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\0')).digest();
  return `${prefix}_${base32(digest.subarray(0, 16)).slice(0, 26)}`;
}

export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string): string {
  // The one-shot hash: no Hash object a call (every request hashes its API key).
  return hash('sha256', value, 'hex');
}
