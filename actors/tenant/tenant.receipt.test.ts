// TenantActor's receipt chain, on the embedded runtime with a real catalog holding the signing
// key: receipts of a tenant get consecutive seq numbers, each linked to the one before, one at a
// time however many are issued at once; a repeated call gets the receipt it was given; the chain
// survives a restart. Receipts are checked with jose and the JWKS alone, and with the SDK.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify, createLocalJWKSet } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { keySealer } from '../../lib/sealed.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';
import { receiptDraft, type ReceiptDraft } from '../../mta/receipt.ts';
import { verifyReceiptChain } from '../../sdk/node/receipts.ts';
import { issueReceipt, RECENT_RECEIPTS, TENANT_ACTOR, tenantActor } from './tenant.actor.ts';

let h: Harness;
let cleanupCatalog: () => Promise<void>;
afterEach(async () => {
  await h.cleanup();
  await cleanupCatalog();
});

async function setUp() {
  h = harness();
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-receipts-'));
  const catalog = new SqliteCatalog(join(dir, 'catalog.db'), keySealer(randomBytes(32)));
  cleanupCatalog = async () => {
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  };
  const keys = new ReceiptKeys(catalog);
  const runtime = await h.start({ actors: [tenantActor] });
  return { runtime, keys, issue: (tenant: string, draft: ReceiptDraft) => issueReceipt(runtime, keys, tenant, draft) };
}

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

/** The raw message of `msg_<n>`, as it left. */
const raw = (n: number) =>
  Buffer.from(`DKIM-Signature: v=1; a=ed25519-sha256; d=shop.example\r\nSubject: ${n}\r\n\r\nHello ${n}\r\n`);

function draft(n: number, attempt = 1): ReceiptDraft {
  return receiptDraft(
    {
      reply: { code: 250, enhanced: '2.0.0', text: `250 2.0.0 Ok: queued as Q${n}` },
      mx: 'mx1.example.com',
      ip: '127.0.0.1',
      tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
      connected_at: '2026-11-26T10:00:00.000Z',
      accepted_at: '2026-11-26T10:00:00.050Z',
    },
    {
      message_id: `msg_${n}`,
      message_id_header: `<msg_${n}@shop.example>`,
      attempt,
      raw: raw(n),
      dkim: { d: 'shop.example', s: ['gp1-rsa', 'gp1-ed'] },
      envelope: { from: `bounce+msg_${n}@bounces.shop.example`, to: 'ann@example.com' },
    },
  );
}

/** The payload of `jws` verified with jose and the JWK Set only: its text and its claims. */
async function verified(jws: string, keys: ReceiptKeys) {
  const { payload } = await compactVerify(jws, createLocalJWKSet(await keys.jwks()), { algorithms: ['EdDSA'] });
  const text = new TextDecoder().decode(payload);
  return { text, claims: JSON.parse(text) as Record<string, unknown> };
}

describe('TenantActor receipts', () => {
  it('chains a tenant’s receipts: seq from 1, each prev the SHA-256 of the payload before, each verifiable with jose and the JWKS', async () => {
    const { issue, keys } = await setUp();
    const receipts = [];
    for (let n = 1; n <= 3; n++) receipts.push(await issue('ten_1', draft(n)));
    expect(receipts.map((r) => r.seq)).toEqual([1, 2, 3]);

    let prev: string | null = null;
    for (const [i, r] of receipts.entries()) {
      const { text, claims } = await verified(r.jws, keys);
      const n = i + 1;
      expect(claims).toEqual({ id: r.id, tenant_id: 'ten_1', seq: n, prev, ...draft(n), issued_at: expect.any(String) });
      // The documented order of the claims, byte for byte.
      expect(Object.keys(claims)).toEqual([
        'id',
        'tenant_id',
        'seq',
        'prev',
        'message_id',
        'message_id_header',
        'attempt',
        'sha256',
        'dkim',
        'envelope',
        'mx',
        'ip',
        'tls',
        'reply',
        'connected_at',
        'accepted_at',
        'issued_at',
      ]);
      expect(claims.id).toMatch(/^rcp_[0-9a-z]{26}$/);
      expect(claims.sha256).toBe(sha256(raw(n)));
      expect(Date.parse(claims.issued_at as string)).not.toBeNaN();
      prev = sha256(text);
    }
    expect(
      (
        await verifyReceiptChain(
          receipts.map((r) => r.jws),
          await keys.jwks(),
        )
      ).map((c) => c.seq),
    ).toEqual([1, 2, 3]);
  });

  it('serialises receipts issued at once: one unbroken chain per tenant', async () => {
    const { issue, keys } = await setUp();
    const issued = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => issue('ten_1', draft(i + 1)).then((r) => ({ tenant: 'ten_1', ...r }))),
      ...Array.from({ length: 10 }, (_, i) => issue('ten_2', draft(100 + i)).then((r) => ({ tenant: 'ten_2', ...r }))),
    ]);
    const jwks = await keys.jwks();
    for (const [tenant, count] of [
      ['ten_1', 30],
      ['ten_2', 10],
    ] as const) {
      const chain = issued.filter((r) => r.tenant === tenant).sort((a, b) => a.seq - b.seq);
      expect(chain.map((r) => r.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
      const claims = await verifyReceiptChain(
        chain.map((r) => r.jws),
        jwks,
      );
      expect(claims.every((c) => c.tenant_id === tenant)).toBe(true);
    }
  });

  it('answers the same receipt for the same message and attempt, and goes on without a gap', async () => {
    const { issue, keys } = await setUp();
    const first = await issue('ten_1', draft(1));
    const again = await issue('ten_1', draft(1));
    expect(again).toEqual(first);
    // The repeat's claims need not match: what was issued for that attempt stands.
    expect(await issue('ten_1', { ...draft(1), reply: { code: 250, enhanced: null, text: '250 other' } })).toEqual(first);
    const retry = await issue('ten_1', draft(1, 2));
    const next = await issue('ten_1', draft(2));
    expect([retry.seq, next.seq]).toEqual([2, 3]);
    expect(await verifyReceiptChain([first.jws, retry.jws, next.jws], await keys.jwks())).toHaveLength(3);
  });

  it('keeps its chain across a restart', async () => {
    const { runtime, keys } = await setUp();
    const first = await issueReceipt(runtime, keys, 'ten_1', draft(1));
    await runtime.stop();
    const restarted = await h.start({ actors: [tenantActor] });
    const second = await issueReceipt(restarted, keys, 'ten_1', draft(2));
    expect(second.seq).toBe(2);
    expect(await verifyReceiptChain([first.jws, second.jws], await keys.jwks())).toHaveLength(2);
  });

  it(`keeps the latest ${RECENT_RECEIPTS} receipts for repeats, and no more`, async () => {
    const { issue, keys } = await setUp();
    const issued = await Promise.all(Array.from({ length: RECENT_RECEIPTS + 1 }, (_, i) => issue('ten_1', draft(i + 1))));
    const bySeq = issued.sort((a, b) => a.seq - b.seq);
    const stored = h.read(
      (db) =>
        (
          db
            .prepare("SELECT count(*) AS n FROM actor_state WHERE actor_type = ? AND actor_id = ? AND key LIKE 'receipt:%'")
            .get(TENANT_ACTOR, 'ten_1') as { n: number }
        ).n,
    );
    expect(stored).toBe(RECENT_RECEIPTS);
    // The second receipt is still kept; the first is not, and a repeat of it is a new link.
    const secondMessage = JSON.parse(Buffer.from(bySeq[1]!.jws.split('.')[1]!, 'base64url').toString()).message_id as string;
    const firstMessage = JSON.parse(Buffer.from(bySeq[0]!.jws.split('.')[1]!, 'base64url').toString()).message_id as string;
    expect(await issue('ten_1', draft(Number(secondMessage.slice(4))))).toEqual(bySeq[1]);
    const repeated = await issue('ten_1', draft(Number(firstMessage.slice(4))));
    expect(repeated.seq).toBe(RECENT_RECEIPTS + 2);
    expect(await verifyReceiptChain([bySeq[RECENT_RECEIPTS]!.jws, repeated.jws], await keys.jwks())).toHaveLength(2);
  });
});
