// How every catalog implementation stores a receipt signing key: the public JWK as JSON text (read
// back as written), the private half sealed (lib/sealed.ts) when written and opened when read,
// bound to its kid.
import type { Sealer } from '../lib/sealed.ts';
import type { NewReceiptKey, ReceiptKey, ReceiptPublicKey } from './catalog.port.ts';

/** A receipt key's row, in either store. */
export type ReceiptKeyRow = Omit<ReceiptKey, 'public_jwk'> & { public_jwk: string };

const context = (kid: string) => `receipt_keys.private_key:${kid}`;

/** The columns kid, public_jwk, private_key of a new key, as stored. */
export function storedReceiptKey(k: NewReceiptKey, sealer: Sealer): [string, string, string] {
  return [k.kid, JSON.stringify(k.public_jwk), sealer.seal(k.private_key, context(k.kid))];
}

/** A key's public part, from a row with or without its private half. */
export function publicReceiptKey(row: Omit<ReceiptKeyRow, 'private_key'>): ReceiptPublicKey {
  return {
    kid: row.kid,
    public_jwk: JSON.parse(row.public_jwk) as ReceiptKey['public_jwk'],
    created_at: row.created_at,
    retired_at: row.retired_at,
  };
}

/** The key a catalog read, its private half opened. */
export function openedReceiptKey(row: ReceiptKeyRow, sealer: Sealer): ReceiptKey {
  const { kid, public_jwk, created_at, retired_at } = publicReceiptKey(row);
  return { kid, public_jwk, private_key: sealer.open(row.private_key, context(kid)), created_at, retired_at };
}
