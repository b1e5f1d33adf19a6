// Prefixed ids (msg_, evt_, tpl_, ten_, key_). New ids start with the time, so ids made close
// together sort, and land, close together in the stores' B-trees.
import { createHash, hash, randomBytes, randomFillSync } from 'node:crypto';

// Crockford's base32, lower case, as character codes.
const ALPHABET = Array.from('0123456789abcdefghjkmnpqrstvwxyz', (c) => c.charCodeAt(0));

// Scratch space reused by every id (ids are made many times a send): no Buffer, no string
// built a character at a time.
const bytes = new Uint8Array(16);
const chars: number[] = new Array<number>(26).fill(0);

/** The 26 characters of 16 bytes in base32, most significant first (the last holds 3 bits). */
function base32(input: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let n = 0;
  for (let i = 0; i < 16; i++) {
    value = ((value << 8) | input[i]!) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      chars[n++] = ALPHABET[(value >>> (bits - 5)) & 31]!;
      bits -= 5;
    }
  }
  chars[n] = ALPHABET[(value << (5 - bits)) & 31]!;
  return String.fromCharCode.apply(null, chars);
}

// Random bytes drawn in blocks: one call into the CSPRNG per 256 ids, not one per id.
const pool = new Uint8Array(2560);
let poolAt = pool.length;

/** A new id: 48 bits of milliseconds, then 80 random bits (26 characters after the prefix). */
export function newId(prefix: string): string {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const now = Date.now();
  const high = Math.floor(now / 2 ** 32);
  bytes[0] = high >>> 8;
  bytes[1] = high;
  // `>>>` takes the low 32 bits; a Uint8Array keeps the low 8 of each.
  bytes[2] = now >>> 24;
  bytes[3] = now >>> 16;
  bytes[4] = now >>> 8;
  bytes[5] = now;
  for (let i = 0; i < 10; i++) bytes[6 + i] = pool[poolAt + i]!;
  poolAt += 10;
  return `${prefix}_${base32(bytes)}`;
}

const digestOf = (parts: string[]) => createHash('sha256').update(parts.join('\0')).digest();

/** The same id every time for the same parts, e.g. a message id from (tenant, idempotency key). */
export function derivedId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${base32(digestOf(parts).subarray(0, 16))}`;
}

/**
 * A derivedId that sorts where `order`, an id newId made, sorts: `order`'s 48 bits of
 * milliseconds, then 80 bits of the parts' hash. Ids derived in the order of the ids they are
 * ordered by land side by side in the stores' B-trees, as new ids do; derivedId's land anywhere,
 * each a page of its own to write.
 */
export function derivedIdOrderedBy(prefix: string, order: string, ...parts: string[]): string {
  const digest = digestOf(parts);
  digest.writeUIntBE(msOf(order), 0, 6);
  return `${prefix}_${base32(digest.subarray(0, 16))}`;
}

/** The milliseconds newId put first in `id`: its first 10 characters hold their 48 bits and 2 bits more. */
function msOf(id: string): number {
  const at = id.lastIndexOf('_') + 1;
  let head = 0;
  for (let i = at; i < at + 10; i++) {
    const digit = ALPHABET.indexOf(id.charCodeAt(i));
    if (digit < 0) throw new Error(`${id} is no id newId made`);
    head = head * 32 + digit;
  }
  return Math.floor(head / 4);
}

// Random bytes of tokens drawn in blocks too (a tracking key each send): one call into the CSPRNG
// per 4 KiB; a token asking for more than a block gets bytes of its own.
const tokenPool = Buffer.alloc(4096);
let tokenPoolAt = tokenPool.length;

export function randomToken(bytes: number): string {
  if (bytes > tokenPool.length) return randomBytes(bytes).toString('base64url');
  if (tokenPoolAt + bytes > tokenPool.length) {
    randomFillSync(tokenPool);
    tokenPoolAt = 0;
  }
  const token = tokenPool.toString('base64url', tokenPoolAt, tokenPoolAt + bytes);
  // Drawn bytes are never handed out twice.
  tokenPoolAt += bytes;
  return token;
}

/** Lowercase hex SHA-256 of text (its UTF-8 bytes) or of bytes. */
export function sha256Hex(value: string | Uint8Array): string {
  // The one-shot hash: no Hash object a call (every request hashes its API key).
  return hash('sha256', value, 'hex');
}
