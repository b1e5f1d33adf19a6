// verifyReceipt and verifyReceiptChain on their own: receipts made here with jose and node:crypto
// as docs/receipts.md describes them (not with Gatepost's code), then changed, cut and reordered.
// actors/tenant/tenant.receipt.test.ts checks receipts Gatepost itself issues.
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { calculateJwkThumbprint, CompactSign, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { receiptHash, ReceiptVerificationError, verifyReceipt, verifyReceiptChain, type ReceiptClaims } from './receipts.ts';

interface TestKey {
  kid: string;
  privateKey: KeyObject;
  jwk: JWK;
}

async function newKey(): Promise<TestKey> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const { kty, crv, x } = publicKey.export({ format: 'jwk' });
  const kid = await calculateJwkThumbprint({ kty, crv, x });
  return { kid, privateKey, jwk: { kty, crv, x, kid, alg: 'EdDSA', use: 'sig' } };
}

const sign = (claims: object, key: TestKey, typ = 'gatepost-receipt+jws') =>
  new CompactSign(Buffer.from(JSON.stringify(claims)))
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ })
    .sign(key.privateKey);

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

function claims(seq: number, prev: string | null, tenant_id = 'ten_1'): ReceiptClaims {
  return {
    id: `rcp_${String(seq).padStart(26, '0')}`,
    tenant_id,
    seq,
    prev,
    message_id: `msg_${seq}`,
    message_id_header: `<msg_${seq}@shop.example>`,
    attempt: 1,
    sha256: sha256(`message ${seq}`),
    dkim: { d: 'shop.example', s: ['gp-rsa', 'gp-ed'] },
    envelope: { from: `bounce+msg_${seq}@bounces.shop.example`, to: 'ann@example.com' },
    mx: 'mx1.example.com',
    ip: '192.0.2.25',
    tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
    reply: { code: 250, enhanced: '2.0.0', text: '250 2.0.0 Ok: queued as 4Xyz' },
    connected_at: '2026-11-26T10:00:00.000Z',
    accepted_at: '2026-11-26T10:00:00.120Z',
    issued_at: '2026-11-26T10:00:00.125Z',
  };
}

/** A chain of `n` receipts of one tenant, each linked to the one before, signed with `key`. */
async function chain(n: number, key: TestKey, tenant = 'ten_1'): Promise<string[]> {
  const out: string[] = [];
  let prev: string | null = null;
  for (let seq = 1; seq <= n; seq++) {
    const c = claims(seq, prev, tenant);
    out.push(await sign(c, key));
    prev = sha256(JSON.stringify(c));
  }
  return out;
}

/** `jws` with the character at `at` replaced by another of the base64url alphabet. */
function changeByte(jws: string, at: number): string {
  const replacement = jws[at] === 'A' ? 'B' : 'A';
  return jws.slice(0, at) + replacement + jws.slice(at + 1);
}

async function failure(promise: Promise<unknown>): Promise<ReceiptVerificationError> {
  const error = await promise.then(
    () => expect.fail('expected a ReceiptVerificationError'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReceiptVerificationError);
  return error as ReceiptVerificationError;
}

let key: TestKey;
let retired: TestKey;
let jwks: { keys: JWK[] };
beforeAll(async () => {
  [key, retired] = [await newKey(), await newKey()];
  jwks = { keys: [retired.jwk, key.jwk] };
});

describe('verifyReceipt', () => {
  it('answers the claims of a receipt signed by a key of the set, the retired ones included', async () => {
    const c = claims(1, null);
    expect(await verifyReceipt(await sign(c, key), jwks)).toEqual(c);
    expect(await verifyReceipt(await sign(c, retired), jwks)).toEqual(c);
  });

  it('refuses a receipt with any byte changed: header, payload or signature', async () => {
    const jws = await sign(claims(1, null), key);
    const [header, payload] = jws.split('.') as [string, string, string];
    const inPayload = header.length + 1 + Math.floor(payload.length / 2);
    expect((await failure(verifyReceipt(changeByte(jws, inPayload), jwks))).reason).toMatch(/invalid_signature|malformed/);
    expect((await failure(verifyReceipt(changeByte(jws, jws.length - 10), jwks))).reason).toBe('invalid_signature');
    await failure(verifyReceipt(changeByte(jws, 5), jwks));
    // The claims changed and put back in base64url: the signature no longer matches.
    const forged = { ...claims(1, null), envelope: { from: 'x@shop.example', to: 'bob@example.com' } };
    const swapped = `${header}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${jws.split('.')[2]}`;
    expect((await failure(verifyReceipt(swapped, jwks))).reason).toBe('invalid_signature');
  });

  it('refuses a receipt of a key not in the set, another typ, and a payload that is not a receipt', async () => {
    const stranger = await newKey();
    expect((await failure(verifyReceipt(await sign(claims(1, null), stranger), jwks))).reason).toBe('unknown_key');
    expect((await failure(verifyReceipt(await sign(claims(1, null), key, 'JWT'), jwks))).reason).toBe('malformed');
    expect((await failure(verifyReceipt(await sign({ hello: 'world' }, key), jwks))).reason).toBe('malformed');
    // The first receipt has no previous one; any other has.
    expect((await failure(verifyReceipt(await sign(claims(1, sha256('x')), key), jwks))).reason).toBe('malformed');
    expect((await failure(verifyReceipt(await sign(claims(2, null), key), jwks))).reason).toBe('malformed');
    expect((await failure(verifyReceipt('not.a.jws', jwks))).reason).toBe('malformed');
  });
});

describe('verifyReceiptChain', () => {
  it('answers the claims of an unbroken chain, whole or from its middle, across a key rotation', async () => {
    const receipts = await chain(5, key);
    expect((await verifyReceiptChain(receipts, jwks)).map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await verifyReceiptChain(receipts.slice(2), jwks)).map((c) => c.seq)).toEqual([3, 4, 5]);
    // The chain hash is of the payload: the same link whichever key signed.
    const rotated = [...receipts.slice(0, 3), await sign(claims(4, receiptHash(receipts[2]!)), retired)];
    expect(await verifyReceiptChain(rotated, jwks)).toHaveLength(4);
  });

  it('finds a receipt deleted from the middle, receipts reordered, a changed byte, and another tenant', async () => {
    const receipts = await chain(5, key);
    const gap = await failure(verifyReceiptChain([...receipts.slice(0, 2), ...receipts.slice(3)], jwks));
    expect(gap).toMatchObject({ reason: 'sequence_gap', index: 2 });
    expect(gap.message).toMatch(/1 receipt missing between seq 2 and seq 4/);

    const reordered = [receipts[0]!, receipts[2]!, receipts[1]!, receipts[3]!];
    expect(await failure(verifyReceiptChain(reordered, jwks))).toMatchObject({ reason: 'sequence_gap', index: 1 });
    const swapped = [receipts[1]!, receipts[0]!];
    expect(await failure(verifyReceiptChain(swapped, jwks))).toMatchObject({ reason: 'out_of_order', index: 1 });

    const changed = [...receipts];
    changed[3] = changeByte(changed[3]!, changed[3]!.length - 20);
    expect(await failure(verifyReceiptChain(changed, jwks))).toMatchObject({ reason: 'invalid_signature', index: 3 });

    // A receipt replaced by another one, validly signed, with the same seq: its successor no longer links to it.
    const replaced = [...receipts];
    replaced[2] = await sign(
      { ...claims(3, receiptHash(receipts[1]!)), envelope: { from: 'a@b.example', to: 'c@d.example' } },
      key,
    );
    expect(await failure(verifyReceiptChain(replaced, jwks))).toMatchObject({ reason: 'chain_broken', index: 3 });

    const other = await chain(2, key, 'ten_2');
    expect(await failure(verifyReceiptChain([receipts[0]!, other[1]!], jwks))).toMatchObject({
      reason: 'tenant_mismatch',
      index: 1,
    });
  });
});

describe('docs/receipts.md', () => {
  it('gives an example that verifies with its JWK Set, and whose header and payload are the ones it shows', async () => {
    const doc = readFileSync(new URL('../../docs/receipts.md', import.meta.url), 'utf8');
    const example = doc.slice(doc.indexOf('**An example**'));
    const [jws, set, payload] = [...example.matchAll(/```(?:json)?\n(.*)\n```/g)].map((m) => m[1]!) as [string, string, string];
    const keys = JSON.parse(set) as { keys: JWK[] };
    expect(await verifyReceipt(jws, keys)).toEqual(JSON.parse(payload));
    const [header, body] = jws.split('.').map((part) => Buffer.from(part, 'base64url').toString());
    expect(header).toBe(`{"alg":"EdDSA","kid":"${keys.keys[0]!.kid}","typ":"gatepost-receipt+jws"}`);
    expect(body).toBe(payload);
  });
});
