// Address validation end to end (issue 23 item 5): POST /v1/validate and /v1/validate/batch
// against a real Gatepost whose DNS is a server of the test's own on loopback
// (GATEPOST_DNS_SERVERS): MX, null MX, A only, NXDOMAIN; the tenant's suppression list; the
// look-ups cached; bad input a verdict or a coded 400, never a crash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';

let dns: DnsServer;
let gp: GatepostProcess;
let t: Awaited<ReturnType<GatepostProcess['tenant']>>;

beforeAll(async () => {
  dns = await startDns({
    'shop.example': { MX: [{ exchange: 'mx.shop.example', priority: 10 }] },
    'mx.shop.example': { A: ['192.0.2.25'] },
    'cached.example': { MX: [{ exchange: 'mx.shop.example', priority: 10 }] },
    'nomail.example': { MX: [{ exchange: '.', priority: 0 }] },
    'a-only.example': { A: ['192.0.2.7'] },
    'xn--bcher-kva.example': { MX: [{ exchange: 'mx.shop.example', priority: 10 }] },
  });
  gp = await startGatepost({ env: { GATEPOST_DNS_SERVERS: dns.address } });
  t = await gp.tenant();
});
afterAll(async () => {
  await gp?.dispose();
  await dns?.close();
});

const validate = async (address: unknown, key = t.live) => {
  const res = await gp.request('POST', '/v1/validate', { key, body: { address } });
  expect(res.status).toBe(200);
  return res.body;
};

describe('POST /v1/validate', () => {
  it.each([
    ['ann@shop.example', 'deliverable', []],
    ['ann@a-only.example', 'deliverable', []],
    ['ann@bücher.example', 'deliverable', []],
    ['ann@nomail.example', 'undeliverable', ['null_mx']],
    ['ann@nowhere.example', 'undeliverable', ['domain_not_found']],
    ['"ann@shop.example', 'undeliverable', ['unpaired_quote']],
    [`${'a'.repeat(286)}@shop.example`, 'undeliverable', ['address_too_long']],
    ['info@shop.example', 'risky', ['role_account']],
  ])('%s is %s %j', async (address, result, reasons) => {
    expect(await validate(address)).toMatchObject({ address, result, reasons });
  });

  it('answers a sandbox key too, and refuses a public key', async () => {
    expect(await validate('ann@shop.example', t.sandbox)).toMatchObject({ result: 'deliverable' });
    const refused = await gp.request('POST', '/v1/validate', { key: t.publicKey, body: { address: 'ann@shop.example' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('key_not_allowed');
  });

  it("says undeliverable for an address the tenant suppressed, and only for that tenant", async () => {
    const added = await gp.request('POST', '/v1/suppressions', { key: t.live, body: { address: 'gone@shop.example' } });
    expect(added.status).toBe(201);
    const v = await eventually(async () => {
      const answer = await validate('gone@shop.example');
      return answer.checks.suppressed === true && answer;
    });
    expect(v).toMatchObject({ result: 'undeliverable', reasons: ['suppressed'] });
    const other = await gp.tenant();
    expect(await validate('gone@shop.example', other.live)).toMatchObject({ result: 'deliverable', checks: { suppressed: false } });
  });

  it('asks DNS about a domain once for many addresses at it', async () => {
    const res = await gp.request('POST', '/v1/validate/batch', {
      key: t.live,
      body: { addresses: Array.from({ length: 50 }, (_, i) => `r${i}@cached.example`) },
    });
    expect(res.status).toBe(200);
    expect(res.body.results.every((r: { result: string }) => r.result === 'deliverable')).toBe(true);
    expect(await validate('more@cached.example')).toMatchObject({ result: 'deliverable' });
    expect(dns.queries.filter((q) => q === 'cached.example MX')).toHaveLength(1);
  });
});

describe('POST /v1/validate/batch', () => {
  it('answers each address in order, and refuses more than 1,000 with a coded 400', async () => {
    const res = await gp.request('POST', '/v1/validate/batch', {
      key: t.live,
      body: { addresses: ['ann@shop.example', 'ann@nomail.example', 'not an address'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { result: string }) => r.result)).toEqual(['deliverable', 'undeliverable', 'undeliverable']);
    const tooMany = await gp.request('POST', '/v1/validate/batch', {
      key: t.live,
      body: { addresses: Array.from({ length: 1001 }, (_, i) => `r${i}@shop.example`) },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('invalid_request');
  });

  it('refuses a body that is not a list of strings with invalid_request', async () => {
    for (const body of [{ addresses: 'ann@shop.example' }, { addresses: [1] }, { address: 'ann@shop.example' }]) {
      const res = await gp.request('POST', '/v1/validate/batch', { key: t.live, body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });
});
