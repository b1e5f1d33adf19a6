// The receipt signing keys on a real catalog (SQLite, sealed): made once on first use whatever
// the number of hosts, rotated with the old key kept in the JWKS, and what they sign verifies
// with jose and the JWKS alone.
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, compactVerify, createLocalJWKSet } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { keySealer } from '../lib/sealed.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { ReceiptKeys, type ReceiptKeyCatalog } from './receipt.keys.ts';
import { RECEIPT_TYP, signReceipt } from './receipt.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function catalog(): Promise<SqliteCatalog> {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-receipt-keys-'));
  const c = new SqliteCatalog(join(dir, 'catalog.db'), keySealer(randomBytes(32)));
  cleanups.push(async () => {
    await c.close();
    await rm(dir, { recursive: true, force: true });
  });
  return c;
}

/** Verifies `jws` with jose and the JWK Set only; answers the payload text and the header. */
async function verify(jws: string, jwks: Awaited<ReturnType<ReceiptKeys['jwks']>>) {
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  return { payload: new TextDecoder().decode(payload), header: protectedHeader };
}

describe('ReceiptKeys', () => {
  it('makes one key on first use, shared by every host of the catalog, its kid the JWK thumbprint', async () => {
    const c = await catalog();
    const [hostA, hostB] = [new ReceiptKeys(c), new ReceiptKeys(c)];
    expect((await hostA.jwks()).keys).toEqual([]);
    const keys = await Promise.all([hostA.current(), hostA.current(), hostB.current()]);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    const { keys: listed } = await hostB.jwks();
    expect(listed).toEqual([
      {
        kty: 'OKP',
        crv: 'Ed25519',
        x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        kid: keys[0]!.kid,
        alg: 'EdDSA',
        use: 'sig',
      },
    ]);
    expect(await calculateJwkThumbprint(listed[0]!)).toBe(keys[0]!.kid);

    const jws = signReceipt('{"id":"rcp_1"}', await hostB.current());
    expect(await verify(jws, await hostA.jwks())).toEqual({
      payload: '{"id":"rcp_1"}',
      header: { alg: 'EdDSA', kid: keys[0]!.kid, typ: RECEIPT_TYP },
    });
    // Byte for byte, the header docs/receipts.md gives.
    expect(Buffer.from(jws.split('.')[0]!, 'base64url').toString()).toBe(
      `{"alg":"EdDSA","kid":"${keys[0]!.kid}","typ":"gatepost-receipt+jws"}`,
    );
  });

  it('rotates: the new key signs, the old one stays in the JWKS so what it signed still verifies', async () => {
    const c = await catalog();
    const hostA = new ReceiptKeys(c);
    // A host that reads the current key on every call: it sees the rotation at once.
    const hostB = new ReceiptKeys(c, 0);
    const old = await hostA.current();
    const before = signReceipt('{"seq":1}', old);

    const rotated = await hostA.rotate();
    expect(rotated.kid).not.toBe(old.kid);
    expect((await hostA.current()).kid).toBe(rotated.kid);
    expect((await hostB.current()).kid).toBe(rotated.kid);
    const after = signReceipt('{"seq":2}', await hostB.current());

    const jwks = await hostB.jwks();
    expect(jwks.keys.map((k) => k.kid)).toEqual([old.kid, rotated.kid]);
    expect((await verify(before, jwks)).header.kid).toBe(old.kid);
    expect((await verify(after, jwks)).header.kid).toBe(rotated.kid);
    // Without the retired key, its receipts no longer verify: the JWKS must keep it.
    const currentOnly = createLocalJWKSet({ keys: jwks.keys.slice(1) });
    await expect(compactVerify(before, currentOnly)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
  });

  it('reads the key again after a failed read, instead of keeping the failure', async () => {
    const c = await catalog();
    let fail = true;
    const flaky: ReceiptKeyCatalog = {
      currentReceiptKey: () => (fail ? Promise.reject(new Error('catalog unavailable')) : c.currentReceiptKey()),
      createReceiptKey: (k) => c.createReceiptKey(k),
      rotateReceiptKey: (k) => c.rotateReceiptKey(k),
      listReceiptKeys: () => c.listReceiptKeys(),
    };
    const keys = new ReceiptKeys(flaky);
    await expect(keys.current()).rejects.toThrow('catalog unavailable');
    fail = false;
    expect((await keys.current()).kid).toBe((await c.currentReceiptKey())!.kid);
  });
});
