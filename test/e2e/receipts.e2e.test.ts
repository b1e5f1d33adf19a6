// Signed delivery receipts end to end: a live send delivered directly to an accepting MX host on
// loopback; its receipt fetched over HTTP and verified with jose and the JWKS alone (served over
// HTTP too); its sha256 is that of the bytes the MX host received, and a changed byte fails; two
// sends' receipts chain and verify with the SDK; after a key rotation the old and the new
// receipts both verify against the new JWKS.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { verifyReceiptChain } from '../../sdk/node/receipts.ts';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { eventually, startGatepost, TEST_RUNTIME, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';

let gp: GatepostProcess;
let dns: DnsServer;
let mx: MxHost;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;

beforeAll(async () => {
  const port = await freePort();
  mx = await startMx('127.0.0.2', port, { starttls: true });
  dns = await startDns({
    'mx.accept.test': { A: ['127.0.0.2'] },
    'accept.test': { MX: [{ exchange: 'mx.accept.test', priority: 10 }] },
  });
  gp = await startGatepost({ env: { GATEPOST_DNS_SERVERS: dns.address, GATEPOST_MX_PORT: String(port) } });
  tenant = await gp.tenant();
  // Direct delivery sends only from a verified domain, DKIM-signed.
  await verifiedDomainOver(gp, dns, tenant.live, 'sender.example');
});

afterAll(async () => {
  await gp?.dispose();
  await mx?.close();
  await dns?.close();
});

let n = 0;
/** Sends one live message to the accepting MX host; answers its id once it is sent. */
async function sendAndDeliver(): Promise<string> {
  const res = await gp.request('POST', '/v1/emails', {
    key: tenant.live,
    body: { from: 'App <app@sender.example>', to: `r${++n}@accept.test`, subject: `Receipt ${n}`, html: '<p>r</p>' },
  });
  expect(res.status).toBe(202);
  const id: string = res.body.id;
  await eventually(
    async () => (await gp.request('GET', `/v1/messages/${id}`, { key: tenant.live })).body.status === 'sent',
    30_000,
  );
  return id;
}

const receiptOf = async (id: string) => {
  const res = await gp.request('GET', `/v1/messages/${id}/receipt`, { key: tenant.live });
  expect(res.status).toBe(200);
  return res.body as { id: string; jws: string };
};
const jwks = async () => {
  const res = await gp.request('GET', '/.well-known/jwks.json');
  expect(res.status).toBe(200);
  return res.body as JSONWebKeySet;
};

/** Verifies with jose alone; answers the payload's claims and the header's kid. */
async function verify(jws: string, set: JSONWebKeySet) {
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(set));
  return { claims: JSON.parse(new TextDecoder().decode(payload)), kid: protectedHeader.kid };
}

const received = (id: string, header: string) => mx.received.filter((r) => r.parsed.messageId === header);

describe('delivery receipts', () => {
  const sent: Array<{ id: string; jws: string }> = [];

  it('a delivered message has a receipt that jose verifies with the JWKS alone, over the bytes the MX host received', async () => {
    const before = await gp.request('POST', '/v1/emails', {
      key: tenant.sandbox,
      body: { from: 'app@sender.example', to: 'x@accept.test', subject: 's', html: '<p>s</p>' },
    });
    expect(before.status).toBe(202);
    const none = await gp.request('GET', `/v1/messages/${before.body.id}/receipt`, { key: tenant.sandbox });
    expect([none.status, none.body.error.code]).toEqual([404, 'receipt_not_found']);

    const id = await sendAndDeliver();
    const receipt = await receiptOf(id);
    expect(receipt.id).toMatch(/^rcp_/);
    // Read through the message's read rule: a sandbox key does not see a live message, nor its receipt.
    const hidden = await gp.request('GET', `/v1/messages/${id}/receipt`, { key: tenant.sandbox });
    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'not_found']);
    const { claims } = await verify(receipt.jws, await jwks());
    const message = (await gp.request('GET', `/v1/messages/${id}`, { key: tenant.live })).body;
    const got = received(id, message.message_id_header);
    expect(got).toHaveLength(1);
    expect(claims).toMatchObject({
      id: receipt.id,
      message_id: id,
      message_id_header: message.message_id_header,
      attempt: 1,
      // The hash is of the bytes as they left, DKIM signatures included.
      sha256: createHash('sha256').update(got[0]!.bytes).digest('hex'),
      dkim: { d: 'sender.example', s: [expect.any(String), expect.any(String)] },
      envelope: { from: `b+${id}@bounces.sender.example`, to: `r${n}@accept.test` },
      mx: 'mx.accept.test',
      ip: '127.0.0.2',
      tls: { version: expect.stringMatching(/^TLSv1\.[23]$/) },
      reply: { code: 250 },
    });
    // email.sent carries the same receipt.
    const event = message.events.find((e: { type: string }) => e.type === 'email.sent');
    expect(event.data.receipt).toEqual({ id: receipt.id, jws: receipt.jws });
    // A changed byte of the bytes received no longer has the receipt's hash; a changed byte of the JWS fails.
    expect(got[0]!.raw).toMatch(/^DKIM-Signature: /im);
    const changed = Buffer.from(got[0]!.bytes);
    changed[changed.length - 3]! ^= 1;
    expect(createHash('sha256').update(changed).digest('hex')).not.toBe(claims.sha256);
    const [h, p, s] = receipt.jws.split('.');
    const payload = Buffer.from(p!, 'base64url');
    payload[payload.length - 2]! ^= 1;
    await expect(verify([h, payload.toString('base64url'), s].join('.'), await jwks())).rejects.toThrow();
    sent.push(receipt);
  });

  it("two sends' receipts chain (seq, prev) and verify with the SDK", async () => {
    sent.push(await receiptOf(await sendAndDeliver()));
    const claims = await verifyReceiptChain(
      sent.map((r) => r.jws),
      await jwks(),
    );
    expect(claims[1]!.seq).toBe(claims[0]!.seq + 1);
    expect(claims[1]!.prev).toBe(
      createHash('sha256')
        .update(Buffer.from(sent[0]!.jws.split('.')[1]!, 'base64url'))
        .digest('hex'),
    );
    // With a receipt left out, the chain no longer verifies.
    sent.push(await receiptOf(await sendAndDeliver()));
    await expect(verifyReceiptChain([sent[0]!.jws, sent[2]!.jws], await jwks())).rejects.toThrow();
  });

  it('after a key rotation, receipts signed before and after it verify against the new JWKS', async () => {
    const oldKid = (await verify(sent[0]!.jws, await jwks())).kid;
    const rotated = await gp.admin('POST', '/receipt-keys/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body.kid).not.toBe(oldKid);
    const after = await receiptOf(await sendAndDeliver());
    const set = await jwks();
    expect(set.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, rotated.body.kid]));
    expect((await verify(sent[0]!.jws, set)).kid).toBe(oldKid);
    const { kid } = await verify(after.jws, set);
    // On one process the rotation is seen at once; hosts of the Dapr runtime read the current key again within a minute.
    if (TEST_RUNTIME === 'embedded') expect(kid).toBe(rotated.body.kid);
    await verifyReceiptChain(
      [...sent, after].map((r) => r.jws),
      set,
    );
  });
});
