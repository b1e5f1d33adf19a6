// /v1/inbound through Fastify's inject: routes on a domain whose records (the inbound MX among
// them) a loopback DNS server publishes, each refusal coded; received messages, their raw bytes
// and attachments, for their own tenant only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../tenancy/tenants.ts';
import { routeFor } from '../../tenancy/inbound.routes.ts';
import type { InboundRoute } from '../../store/catalog.port.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { startDns, type DnsServer } from '../../test/harness/dns.harness.ts';
import { publish, verifiedDomain } from '../../test/harness/domains.harness.ts';

let app: TestApp;
let dns: DnsServer;
let tenantId: string;
let key: string;
let otherKey: string;

beforeAll(async () => {
  dns = await startDns();
  app = await buildApp('inbound-routes', { dnsServers: [dns.address] });
  tenantId = (await createTenant(app.catalog, { name: 'shop', default_from: null })).id;
  key = (await app.keys.issue(tenantId, 'live', null)).secret;
  const other = await createTenant(app.catalog, { name: 'other', default_from: null });
  otherKey = (await app.keys.issue(other.id, 'live', null)).secret;
  await verifiedDomain(app.domains, dns, tenantId, 'shop.example');
  // Verified for sending, but its MX points elsewhere: no inbound domain.
  const sendOnly = await app.domains.create(tenantId, 'send-only.example');
  publish(
    dns,
    sendOnly.records.filter((r) => r.purpose !== 'inbound_mx'),
  );
  expect((await app.domains.verify(tenantId, sendOnly.id)).status).toBe('verified');
});
afterAll(async () => {
  await app.close();
  await dns.close();
});

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: object, as = key) =>
  app.server.app.inject({ method, url, headers: { authorization: `Bearer ${as}` }, ...(body ? { payload: body } : {}) });

describe('inbound routes', () => {
  it('creates, lists, gets, changes and deletes a route, for its tenant only', async () => {
    const created = await call('POST', '/v1/inbound/routes', { match: 'Support+*@Shop.Example' });
    expect(created.statusCode).toBe(201);
    const route = created.json();
    expect(route).toEqual({
      id: expect.stringMatching(/^rte_/),
      match: 'support+*@shop.example',
      domain: 'shop.example',
      action: 'webhook',
      endpoint_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await call('GET', '/v1/inbound/routes')).json().data).toEqual([route]);
    expect((await call('GET', `/v1/inbound/routes/${route.id}`)).json()).toEqual(route);
    expect((await call('GET', `/v1/inbound/routes/${route.id}`, undefined, otherKey)).statusCode).toBe(404);
    expect((await call('POST', '/v1/inbound/routes', { match: 'support+*@shop.example' })).json().error.code).toBe(
      'inbound_route_exists',
    );

    const changed = await call('PATCH', `/v1/inbound/routes/${route.id}`, { action: 'store' });
    expect(changed.json()).toMatchObject({ id: route.id, action: 'store', match: route.match });
    expect((await call('DELETE', `/v1/inbound/routes/${route.id}`, undefined, otherKey)).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/inbound/routes/${route.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/v1/inbound/routes/${route.id}`)).statusCode).toBe(404);
  });

  it('refuses a domain that is not an inbound domain of the tenant, a bad match and an unknown endpoint', async () => {
    for (const match of ['*@send-only.example', '*@unknown.example']) {
      const refused = await call('POST', '/v1/inbound/routes', { match });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error.code).toBe('inbound_domain_not_verified');
    }
    // Another tenant's inbound domain is not this one's either.
    expect((await call('POST', '/v1/inbound/routes', { match: '*@shop.example' }, otherKey)).json().error.code).toBe(
      'inbound_domain_not_verified',
    );
    for (const match of ['no-at-sign', 'a b@shop.example', 'x@not a domain', '**@shop.example', '@shop.example']) {
      const refused = await call('POST', '/v1/inbound/routes', { match });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toMatchObject({ code: 'invalid_request' });
    }
    const endpoint = await call('POST', '/v1/inbound/routes', { match: 'x@shop.example', endpoint_id: 'whk_nope' });
    expect(endpoint.json().error).toMatchObject({ code: 'invalid_request', details: [{ field: 'endpoint_id' }] });
    const storing = await call('POST', '/v1/inbound/routes', {
      match: 'x@shop.example',
      action: 'store',
      endpoint_id: 'whk_nope',
    });
    expect(storing.json().error).toMatchObject({ code: 'invalid_request', details: [{ field: 'endpoint_id' }] });
  });

  it('matches the most specific route: the address, then the pattern with most characters, then the catch-all', () => {
    const route = (id: string, match: string, created_at = '2026-01-01T00:00:00.000Z') =>
      ({ id, match, created_at }) as InboundRoute;
    const routes = [
      route('all', '*@shop.example'),
      route('support', 'support+*@shop.example'),
      route('orders', '*-orders@shop.example'),
      route('exact', 'support+vip@shop.example'),
    ];
    expect(routeFor(routes, 'Support+VIP@shop.example')?.id).toBe('exact');
    expect(routeFor(routes, 'support+1042@shop.example')?.id).toBe('support');
    expect(routeFor(routes, 'support+@shop.example')?.id).toBe('support');
    expect(routeFor(routes, 'eu-orders@shop.example')?.id).toBe('orders');
    expect(routeFor(routes, 'ann@shop.example')?.id).toBe('all');
    expect(routeFor(routes.slice(1), 'ann@shop.example')).toBeNull();
    // Dots and other specials are literal, not regular expression syntax.
    expect(routeFor([route('dot', 'a.b@shop.example')], 'axb@shop.example')).toBeNull();
  });
});

describe('received messages', () => {
  it('serves a message, its raw bytes and its attachments to its tenant only', async () => {
    const raw = Buffer.from('Subject: hi\r\n\r\nhello\r\n');
    await app.catalog.putInboundMessage({
      id: 'inm_test1',
      tenant_id: tenantId,
      route_id: 'rte_x',
      mail_from: 'ann@example.com',
      rcpt_to: ['support@shop.example'],
      remote_address: '127.0.0.1',
      received_at: new Date().toISOString(),
      payload: { subject: 'hi', attachments: [{ filename: 'a "b".txt', content_type: 'text/html', size: 5, content_id: null }] },
      raw,
      attachments: [
        { filename: 'a "b".txt', content_type: 'text/html', size: 5, content_id: null, content: Buffer.from('<b>x') },
      ],
    });
    const got = await call('GET', '/v1/inbound/messages/inm_test1');
    expect(got.json()).toMatchObject({
      id: 'inm_test1',
      subject: 'hi',
      size: raw.length,
      raw_url: 'http://gatepost.test/v1/inbound/messages/inm_test1/raw',
      attachments: [{ filename: 'a "b".txt', url: 'http://gatepost.test/v1/inbound/messages/inm_test1/attachments/0' }],
    });
    expect((await call('GET', '/v1/inbound/messages')).json().data.map((m: { id: string }) => m.id)).toContain('inm_test1');
    const rawAnswer = await call('GET', '/v1/inbound/messages/inm_test1/raw');
    expect(rawAnswer.headers['content-type']).toBe('message/rfc822');
    expect(rawAnswer.rawPayload).toEqual(raw);
    const attachment = await call('GET', '/v1/inbound/messages/inm_test1/attachments/0');
    expect(attachment.headers['content-disposition']).toBe('attachment; filename="a _b_.txt"');
    expect(attachment.body).toBe('<b>x');
    expect((await call('GET', '/v1/inbound/messages/inm_test1/attachments/1')).statusCode).toBe(404);
    for (const url of [
      '/v1/inbound/messages/inm_test1',
      '/v1/inbound/messages/inm_test1/raw',
      '/v1/inbound/messages/inm_test1/attachments/0',
    ]) {
      expect((await call('GET', url, undefined, otherKey)).statusCode).toBe(404);
    }
    expect((await call('GET', '/v1/inbound/messages', undefined, otherKey)).json().data).toEqual([]);
  });
});
