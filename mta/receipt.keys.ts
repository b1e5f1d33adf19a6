// The operator's receipt signing keys (Ed25519), kept in the catalog so every host of either
// runtime signs with the same one: made on first use, rotated by the operator (the new key signs,
// the old ones are retired but stay in the JWKS, so the receipts they signed still verify).
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Catalog, NewReceiptKey, ReceiptKey, ReceiptPublicKey } from '../store/catalog.port.ts';
import type { SigningKey } from './receipt.ts';

export type ReceiptKeyCatalog = Pick<Catalog, 'currentReceiptKey' | 'createReceiptKey' | 'rotateReceiptKey' | 'listReceiptKeys'>;

/** A public key as the JWKS lists it (RFC 7517, RFC 8037). */
export interface ReceiptJwk extends JWK {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/**
 * How long a host signs with the key it read before reading the current one again: a rotation on
 * one host reaches the others within this. Receipts signed meanwhile with the retired key still
 * verify (the JWKS keeps it).
 */
export const CURRENT_KEY_TTL_MS = 60_000;

/** A new key pair; its kid is the RFC 7638 thumbprint of the public JWK. */
export async function generateReceiptKey(): Promise<NewReceiptKey> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const { kty, crv, x } = publicKey.export({ format: 'jwk' });
  const public_jwk = { kty: kty!, crv: crv!, x: x! };
  return {
    kid: await calculateJwkThumbprint(public_jwk),
    public_jwk,
    private_key: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
  };
}

const signingKey = (k: ReceiptKey): SigningKey => ({ kid: k.kid, privateKey: createPrivateKey(k.private_key) });

const jwk = (k: ReceiptPublicKey): ReceiptJwk => ({ ...k.public_jwk, kid: k.kid, alg: 'EdDSA', use: 'sig' });

export class ReceiptKeys {
  private cached: { key: Promise<SigningKey>; until: number } | null = null;

  constructor(
    private readonly catalog: ReceiptKeyCatalog,
    private readonly ttlMs = CURRENT_KEY_TTL_MS,
  ) {}

  /** The key receipts are signed with now; the first is made on first use. */
  current(): Promise<SigningKey> {
    if (this.cached && this.cached.until > Date.now()) return this.cached.key;
    const key = this.load();
    this.cached = { key, until: Date.now() + this.ttlMs };
    // A failed read is not kept: the next call reads again.
    key.catch(() => {
      if (this.cached?.key === key) this.cached = null;
    });
    return key;
  }

  private async load(): Promise<SigningKey> {
    const stored = (await this.catalog.currentReceiptKey()) ?? (await this.catalog.createReceiptKey(await generateReceiptKey()));
    return signingKey(stored);
  }

  /** Makes a new key current and retires the one before; answers the new key's public part. */
  async rotate(): Promise<ReceiptJwk> {
    const stored = await this.catalog.rotateReceiptKey(await generateReceiptKey());
    this.cached = { key: Promise.resolve(signingKey(stored)), until: Date.now() + this.ttlMs };
    return jwk(stored);
  }

  /** The JWK Set of every key, current and retired, oldest first: what `/.well-known/jwks.json` serves. */
  async jwks(): Promise<{ keys: ReceiptJwk[] }> {
    return { keys: (await this.catalog.listReceiptKeys()).map(jwk) };
  }
}
