// POST /v1/validate and /v1/validate/batch in process (Fastify inject), with every DNS answer
// from a real DNS server on loopback (dns.harness.ts): MX, null MX, A only, no address, NXDOMAIN,
// and a server that never answers; and the tenant's suppression list through the real actors.
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { startDns, type DnsServer } from '../../test/harness/dns.harness.ts';
import { eventually } from '../../test/harness/gatepost.harness.ts';

const ADMIN = 'a'.repeat(40);
let dns: DnsServer;
let silent: Socket;
let app: TestApp;
let silentApp: TestApp;
const keys = {} as Record<'live' | 'sending' | 'sandbox' | 'public', string>;
let silentKey: string;

async function keyOf(test: TestApp, kind: string, scope?: string): Promise<string> {
  const tenant = (await test.catalog.listTenants())[0] ?? (await createTenant(test.catalog, { name: 'shop' }));
  const res = await test.server.app.inject({
    method: 'POST',
    url: `/v1/admin/tenants/${tenant.id}/keys`,
    headers: { authorization: `Bearer ${ADMIN}` },
    payload: { kind, ...(scope ? { scope } : {}) },
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ key: string }>().key;
}

beforeAll(async () => {
  dns = await startDns({
    'shop.example': { MX: [{ exchange: 'mx.shop.example', priority: 10 }] },
    'mx.shop.example': { A: ['127.0.0.1'] },
    'gmial.com': { MX: [{ exchange: 'mx.shop.example', priority: 10 }] },
    'mailinator.com': { MX: [{ exchange: 'mx.shop.example', priority: 10 }] },
    'xn--bcher-kva.de': { MX: [{ exchange: 'mx.shop.example', priority: 10 }] },
    'nomail.example': { MX: [{ exchange: '.', priority: 0 }] },
    'a-only.example': { A: ['192.0.2.7'] },
    'v6-only.example': { AAAA: ['2001:db8::7'] },
    'bare.example': { TXT: ['v=spf1 -all'] },
    'broken.example': { SERVFAIL: true },
  });
  // A DNS server that reads every question and answers none.
  silent = createSocket('udp4');
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  app = await buildApp('validate', { actors: true, deps: { adminToken: ADMIN }, dnsServers: [dns.address] });
  keys.live = await keyOf(app, 'live');
  keys.sending = await keyOf(app, 'live', 'sending_access');
  keys.sandbox = await keyOf(app, 'sandbox');
  keys.public = await keyOf(app, 'public');
  silentApp = await buildApp('validate-silent', {
    actors: true,
    deps: { adminToken: ADMIN },
    dnsServers: [`127.0.0.1:${silent.address().port}`],
    dnsTimeoutMs: 200,
  });
  silentKey = await keyOf(silentApp, 'live');
});
afterAll(async () => {
  await app?.close();
  await silentApp?.close();
  await dns?.close();
  silent?.close();
});

const post = (url: string, key: string, payload: unknown, on = app) =>
  on.server.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload: payload as object });
const validate = async (address: string, key = keys.live) => {
  const res = await post('/v1/validate', key, { address });
  expect(res.statusCode).toBe(200);
  return res.json();
};

describe('POST /v1/validate with DNS answers', () => {
  it.each([
    ['ann@shop.example', 'deliverable', [], { domain: true, mx: true, null_mx: false }],
    ['ann@a-only.example', 'deliverable', [], { domain: true, mx: true, null_mx: false }],
    ['ann@v6-only.example', 'deliverable', [], { domain: true, mx: true, null_mx: false }],
    ['ann@nomail.example', 'undeliverable', ['null_mx'], { domain: true, mx: false, null_mx: true }],
    ['ann@bare.example', 'undeliverable', ['no_mail_host'], { domain: true, mx: false, null_mx: false }],
    ['ann@nowhere.example', 'undeliverable', ['domain_not_found'], { domain: false, mx: false, null_mx: false }],
    ['ann@mailinator.com', 'risky', ['disposable_domain'], { disposable: true }],
    ['postmaster@shop.example', 'risky', ['role_account'], { role: true }],
    ['ann@bücher.de', 'deliverable', [], { mx: true }],
  ])('%s is %s %j', async (address, result, reasons, checks) => {
    const v = await validate(address);
    expect(v).toMatchObject({ address, result, reasons, checks: { syntax: true, suppressed: false, ...checks } });
  });

  it('looks up the punycode form of an internationalised domain', async () => {
    await validate('jo@bücher.de');
    expect(dns.queries).toContain('xn--bcher-kva.de MX');
  });

  it('suggests the common domain for a typo', async () => {
    expect(await validate('ann@gmial.com')).toMatchObject({
      result: 'risky',
      reasons: ['possible_typo'],
      suggestion: 'ann@gmail.com',
    });
  });

  it('answers an address of 300 characters or with an unpaired quote as undeliverable, asking DNS nothing', async () => {
    const before = dns.queries.length;
    expect(await validate(`${'a'.repeat(288)}@shop.example`)).toMatchObject({
      result: 'undeliverable',
      reasons: ['address_too_long'],
      checks: { syntax: false, mx: null },
    });
    expect(await validate('"ann@shop.example')).toMatchObject({ result: 'undeliverable', reasons: ['unpaired_quote'] });
    expect(dns.queries.length).toBe(before);
  });

  it('is unknown when the DNS server answers SERVFAIL', async () => {
    expect(await validate('ann@broken.example')).toMatchObject({
      result: 'unknown',
      reasons: ['dns_unavailable'],
      checks: { syntax: true, domain: null, mx: null, null_mx: null },
    });
  });

  it('is unknown when the DNS server does not answer', async () => {
    const res = await post('/v1/validate', silentKey, { address: 'ann@shop.example' }, silentApp);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      result: 'unknown',
      reasons: ['dns_unavailable'],
      checks: { syntax: true, domain: null, mx: null, null_mx: null },
    });
  });

  it("is undeliverable once the tenant suppresses the address, and deliverable again once it lifts it", async () => {
    expect(await validate('gone@shop.example')).toMatchObject({ result: 'deliverable' });
    expect((await post('/v1/suppressions', keys.live, { address: 'Gone@shop.example' })).statusCode).toBe(201);
    // The catalog's list follows the recipient actor within moments.
    const v = await eventually(async () => {
      const answer = await validate('gone@shop.example', keys.sandbox);
      return answer.checks.suppressed === true && answer;
    });
    expect(v).toMatchObject({ result: 'undeliverable', reasons: ['suppressed'] });
    const del = await app.server.app.inject({
      method: 'DELETE',
      url: '/v1/suppressions/gone@shop.example',
      headers: { authorization: `Bearer ${keys.live}` },
    });
    expect(del.statusCode).toBe(204);
    // The actor's word is final on a hit in the catalog, so lifting it is heard at once.
    expect(await validate('gone@shop.example')).toMatchObject({ result: 'deliverable', checks: { suppressed: false } });
  });
});

describe('POST /v1/validate/batch', () => {
  it('answers one verdict per address, in order', async () => {
    const addresses = ['ann@shop.example', 'ann@nomail.example', '"bad@shop.example', 'ann@shop.example'];
    const res = await post('/v1/validate/batch', keys.sending, { addresses });
    expect(res.statusCode).toBe(200);
    expect(res.json().results.map((r: { address: string; result: string }) => [r.address, r.result])).toEqual([
      ['ann@shop.example', 'deliverable'],
      ['ann@nomail.example', 'undeliverable'],
      ['"bad@shop.example', 'undeliverable'],
      ['ann@shop.example', 'deliverable'],
    ]);
  });

  it('takes 1,000 addresses, and refuses 1,001 with a coded 400', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@shop.example`);
    const ok = await post('/v1/validate/batch', keys.live, { addresses: many(1000) });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().results).toHaveLength(1000);
    const refused = await post('/v1/validate/batch', keys.live, { addresses: many(1001) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'invalid_request' });
    expect(JSON.stringify(refused.json().error)).toContain('at most 1000 addresses');
  });
});

describe('bad requests and keys', () => {
  it.each([
    ['/v1/validate', {}],
    ['/v1/validate', { address: 42 }],
    ['/v1/validate', { address: 'a'.repeat(1025) }],
    ['/v1/validate', { address: 'ann@shop.example', extra: true }],
    ['/v1/validate/batch', { addresses: [] }],
    ['/v1/validate/batch', { addresses: ['ann@shop.example', null] }],
    ['/v1/validate/batch', ['ann@shop.example']],
  ])('%s refuses %j with invalid_request', async (url, body) => {
    const res = await post(url, keys.live, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
  });

  it('live (any scope) and sandbox keys may validate; a public key may not', async () => {
    for (const key of [keys.live, keys.sending, keys.sandbox]) {
      expect((await post('/v1/validate', key, { address: 'ann@shop.example' })).statusCode).toBe(200);
    }
    const refused = await post('/v1/validate', keys.public, { address: 'ann@shop.example' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('key_not_allowed');
  });
});
