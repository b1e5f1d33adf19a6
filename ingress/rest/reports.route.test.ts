// GET /v1/reports and GET /v1/admin/reports through Fastify's inject, over reports the bounce
// intake kept: a tenant sees those that arrived at its own return-path domains, page by page; the
// operator sees every tenant's and those no tenant owns; keys that may not manage see none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { bouncesIntake } from '../inbound/bounces.intake.ts';

const ADMIN = 'a'.repeat(40);
let app: TestApp;
const tenants = {} as Record<'shop' | 'other', string>;
const keys = {} as Record<'full' | 'sending' | 'sandbox' | 'otherFull', string>;
const dkim = { selector: 's', public_key: 'p', private_key: '-----BEGIN PRIVATE KEY-----\nk\n-----END PRIVATE KEY-----\n' };

const get = (url: string, token: string) =>
  app.server.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  app = await buildApp('reports', { actors: true, deps: { adminToken: ADMIN } });
  const issue = async (tenant: string, body: object) =>
    (
      await app.server.app.inject({
        method: 'POST',
        url: `/v1/admin/tenants/${tenant}/keys`,
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: body,
      })
    ).json<{ key: string }>().key;
  for (const [name, domain] of [
    ['shop', 'shop.example'],
    ['other', 'other.example'],
  ] as const) {
    const t = await createTenant(app.catalog, { name, default_from: null });
    tenants[name] = t.id;
    const d = await app.catalog.createDomain({
      id: `dom_${name}`,
      tenant_id: t.id,
      name: domain,
      dkim: { rsa: dkim, ed25519: dkim },
      tracking_host: null,
    });
    await app.catalog.recordDomainCheck(t.id, d.id, { status: 'verified', checks: {} });
  }
  keys.full = await issue(tenants.shop, { kind: 'live' });
  keys.sending = await issue(tenants.shop, { kind: 'live', scope: 'sending_access' });
  keys.sandbox = await issue(tenants.shop, { kind: 'sandbox' });
  keys.otherFull = await issue(tenants.other, { kind: 'live' });
  const intake = bouncesIntake({ invoker: app.runtime, catalog: app.catalog });
  // A second apart, so that the order newest first is the order taken.
  let second = 0;
  const take = (rcpt: string, text: string) =>
    intake.take({
      rcpt,
      mailFrom: '',
      raw: Buffer.from(text),
      remoteAddress: '192.0.2.25',
      receivedAt: new Date(Date.UTC(2026, 10, 26, 9, 0, ++second)).toISOString(),
    });
  for (let i = 0; i < 3; i++)
    await take('b+msg_nothere1@bounces.shop.example', `Subject: returned ${i}\r\n\r\n550 5.1.1 no such user`);
  await take('fbl@bounces.other.example', 'Subject: hello\r\n\r\nnot a report');
  await take('b+msg_nothere2@bounces.unowned.example', 'Subject: x\r\n\r\nnothing');
});
afterAll(() => app.close());

describe('GET /v1/reports', () => {
  it("pages through the tenant's own reports, newest first, each with what came of it", async () => {
    const first = await get('/v1/reports?limit=2', keys.full);
    expect(first.statusCode).toBe(200);
    const page = first.json<{ data: Record<string, unknown>[]; next_cursor: string }>();
    expect(page.data).toHaveLength(2);
    expect(page.data[0]).toEqual({
      id: expect.stringMatching(/^rpt_/),
      rcpt: 'b+msg_nothere1@bounces.shop.example',
      mail_from: '',
      remote_address: '192.0.2.25',
      received_at: '2026-11-26T09:00:03.000Z',
      kind: 'plain',
      outcome: 'unrecognised',
      message_id: 'msg_nothere1',
      reason: 'no such message for this tenant',
      findings: expect.objectContaining({ recipients: [expect.objectContaining({ status: '5.1.1', smtp_code: 550 })] }),
      excerpt: 'Subject: returned 2\r\n\r\n550 5.1.1 no such user',
      size: Buffer.byteLength('Subject: returned 2\r\n\r\n550 5.1.1 no such user'),
    });
    const rest = (await get(`/v1/reports?limit=2&cursor=${page.next_cursor}`, keys.full)).json();
    expect(rest).toMatchObject({ data: [{ excerpt: expect.stringContaining('returned 0') }], next_cursor: null });
    expect((await get('/v1/reports', keys.otherFull)).json().data).toMatchObject([{ rcpt: 'fbl@bounces.other.example' }]);
  });

  it('is refused to keys that may not manage, and a cursor it did not hand out is invalid_request', async () => {
    for (const key of [keys.sending, keys.sandbox]) expect((await get('/v1/reports', key)).statusCode).toBe(403);
    const bad = await get('/v1/reports?cursor=nope', keys.full);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_request');
  });
});

describe('GET /v1/admin/reports', () => {
  it("lists every tenant's reports and those of no tenant's domain, with the tenant", async () => {
    const all = (await get('/v1/admin/reports', ADMIN)).json<{
      data: { tenant_id: string | null; rcpt: string; reason: string }[];
    }>().data;
    expect(all.map((r) => r.tenant_id)).toEqual([null, tenants.other, tenants.shop, tenants.shop, tenants.shop]);
    expect(all[0]).toMatchObject({
      rcpt: 'b+msg_nothere2@bounces.unowned.example',
      reason: 'no tenant has unowned.example verified',
    });
    expect((await get('/v1/admin/reports', keys.full)).statusCode).toBe(401);
  });
});
