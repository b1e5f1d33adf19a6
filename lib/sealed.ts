// Secrets at rest (webhook signing secrets, the DKIM private keys of sending domains), sealed with AES-256-GCM
// under a key the operator gives (GATEPOST_ENCRYPTION_KEY), so a copy of the database alone
// reveals none of them. The stored form names its key, so keys can rotate: values sealed under an
// old key (GATEPOST_ENCRYPTION_KEYS_OLD) still open, and are sealed under the current key when
// next written. docs/security.md describes the format.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** `sealed:v1:<key id>:<iv>:<ciphertext>:<tag>`, the last three base64url. */
const PREFIX = 'sealed:v1:';

export interface Sealer {
  /** The form to store: sealed under the current key, or `plain` itself when no key is set. */
  seal(plain: string, context: string): string;
  /** The value of a stored form; one stored before a key was set is returned as it is. */
  open(stored: string, context: string): string;
}

/** A 32-byte key, given as 64 hex digits or as base64 (44 characters). */
export function parseKey(name: string, text: string): Buffer {
  const hex = /^[0-9a-f]{64}$/i.test(text);
  const key = Buffer.from(text, hex ? 'hex' : 'base64');
  if (key.length !== 32 || (!hex && !/^[A-Za-z0-9+/_-]{43}=?$/.test(text))) {
    throw new Error(`${name} must be 32 random bytes, as 64 hex digits or base64 (openssl rand -base64 32)`);
  }
  return key;
}

/** A key's id: the first 8 hex digits of its SHA-256, which tells keys apart without revealing them. */
export const keyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 8);

/** Seals under `current`; opens what `current` or any of `old` sealed. */
export function keySealer(current: Buffer, old: Buffer[] = []): Sealer {
  const currentId = keyId(current);
  const keys = new Map([...old, current].map((k) => [keyId(k), k]));
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      // The context (which row and column) is authenticated: a sealed value copied elsewhere does not open.
      cipher.setAAD(Buffer.from(context));
      const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${PREFIX}${currentId}:${[iv, sealed, cipher.getAuthTag()].map((b) => b.toString('base64url')).join(':')}`;
    },
    open(stored, context) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [id, iv, sealed, tag] = stored.slice(PREFIX.length).split(':');
      const key = keys.get(id!);
      if (!key)
        throw new Error(
          `a secret is sealed with key ${id}, which is neither GATEPOST_ENCRYPTION_KEY nor among GATEPOST_ENCRYPTION_KEYS_OLD`,
        );
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv!, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(sealed!, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** No key set: values are stored as they are; a sealed one cannot be opened, and says so. */
export const plainSealer: Sealer = {
  seal: (plain) => plain,
  open(stored) {
    if (!stored.startsWith(PREFIX)) return stored;
    throw new Error('a secret is sealed, but GATEPOST_ENCRYPTION_KEY is not set');
  },
};
