// What each kind of key may do on the native API, at the HTTP level (Fastify inject): the
// reproductions of issue 20 item 1, then every keyed route against every kind of key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../tenancy/permissions.ts';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { startDns, type DnsServer } from '../../test/harness/dns.harness.ts';
import { verifiedDomain } from '../../test/harness/domains.harness.ts';
import type { RestServer } from './server.ts';

const ADMIN = 'a'.repeat(40);
let app: TestApp;
let dns: DnsServer;
let server: RestServer;

type Holder = 'full' | 'sending' | 'sandbox' | 'public' | 'publicSandbox';
const keys = {} as Record<Holder, string>;
/** A second sending_access key of the same tenant. */
let otherSending: string;

/** The matrix, as docs/security.md states it. */
const MAY: Record<Holder, Permission[]> = {
  full: [...PERMISSIONS],
  sending: ['send', 'read_messages'],
  sandbox: ['send', 'read_messages', 'read_captures', 'read_templates', 'read_events'],
  public: [],
  publicSandbox: [],
};

beforeAll(async () => {
  dns = await startDns();
  app = await buildApp('access', { actors: true, deps: { adminToken: ADMIN }, dnsServers: [dns.address] });
  server = app.server;
  const tenant = await createTenant(app.catalog, { name: 'shop', default_from: 'shop@sender.example' });
  // Live sends go out only from a verified domain.
  await verifiedDomain(app.domains, dns, tenant.id, 'sender.example');
  const issue = async (body: object) => {
    const res = await server.app.inject({
      method: 'POST',
      url: `/v1/admin/tenants/${tenant.id}/keys`,
      headers: { authorization: `Bearer ${ADMIN}` },
      payload: body,
    });
    expect(res.statusCode).toBe(201);
    return res.json<{ key: string }>().key;
  };
  keys.full = await issue({ kind: 'live' });
  keys.sending = await issue({ kind: 'live', scope: 'sending_access' });
  keys.sandbox = await issue({ kind: 'sandbox' });
  keys.public = await issue({ kind: 'public' });
  keys.publicSandbox = await issue({ kind: 'public', sandbox: true });
  otherSending = await issue({ kind: 'live', scope: 'sending_access' });
});
afterAll(async () => {
  await app.close();
  await dns.close();
});

const call = (method: string, url: string, key: string, payload?: object) =>
  server.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${key}` },
    ...(payload ? { payload } : {}),
  });

const code = (res: { json: () => unknown }) => (res.json() as { error: { code: string } }).error.code;

describe('a sandbox key (issue 20 item 1)', () => {
  it('cannot change a template that live mail sends', async () => {
    const made = await call('POST', '/v1/templates', keys.full, { slug: 'contact', subject: 'Hi', html: '<p>h</p>' });
    expect(made.statusCode).toBe(201);
    const res = await call('PATCH', '/v1/templates/contact', keys.sandbox, { to: 'attacker@evil.example' });
    expect(res.statusCode).toBe(403);
    expect(code(res)).toBe('insufficient_scope');
    expect((await call('GET', '/v1/templates/contact', keys.sandbox)).json()).not.toHaveProperty('to', 'attacker@evil.example');
  });

  it('cannot list, add or delete suppressions', async () => {
    const added = await call('POST', '/v1/suppressions', keys.full, { address: 'gone@example.com' });
    expect(added.statusCode).toBe(201);
    for (const [method, url, body] of [
      ['GET', '/v1/suppressions'],
      ['DELETE', '/v1/suppressions/gone@example.com'],
      ['POST', '/v1/suppressions', { address: 'x@example.com' }],
    ] as const) {
      const res = await call(method, url, keys.sandbox, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(code(res)).toBe('insufficient_scope');
    }
    expect((await call('GET', '/v1/suppressions/gone@example.com', keys.full)).statusCode).toBe(200);
  });

  it('cannot create a webhook endpoint', async () => {
    const res = await call('POST', '/v1/webhooks', keys.sandbox, { url: 'https://hooks.example/x', events: ['email.sent'] });
    expect(res.statusCode).toBe(403);
    expect(code(res)).toBe('insufficient_scope');
  });

  it('reads a sandbox message but never a live one', async () => {
    // Scheduled an hour ahead: admitted, and no delivery is tried while the test runs.
    const draft = {
      to: 'r@example.com',
      subject: 's',
      html: '<p>h</p>',
      send_at: new Date(Date.now() + 3_600_000).toISOString(),
    };
    const live = await call('POST', '/v1/emails', keys.full, draft);
    const sandbox = await call('POST', '/v1/emails', keys.sandbox, draft);
    expect([live.statusCode, sandbox.statusCode]).toEqual([202, 202]);
    const liveId = live.json<{ id: string }>().id;
    const sandboxId = sandbox.json<{ id: string }>().id;

    const refused = await call('GET', `/v1/messages/${liveId}`, keys.sandbox);
    expect(refused.statusCode).toBe(404);
    expect(code(refused)).toBe('not_found');
    expect((await call('GET', `/v1/messages/${sandboxId}`, keys.sandbox)).json()).toMatchObject({ id: sandboxId, sandbox: true });
    expect((await call('GET', `/v1/messages/${liveId}`, keys.full)).json()).toMatchObject({ id: liveId, sandbox: false });
  });
});

describe('a sending_access key (issue 20 item 1)', () => {
  /** Scheduled an hour ahead where the ingress can say so: admitted, and no delivery is tried while the test runs. */
  const later = () => new Date(Date.now() + 3_600_000).toISOString();
  const draft = () => ({ to: 'r@example.com', subject: 's', html: '<p>h</p>', send_at: later() });
  const sendWith = async (key: string) => {
    const res = await call('POST', '/v1/emails', key, draft());
    expect(res.statusCode).toBe(202);
    return res.json<{ id: string }>().id;
  };
  const read = (id: string, key: string) => call('GET', `/v1/messages/${id}`, key);

  it('reads, with its timeline, the messages it sent', async () => {
    const id = await sendWith(keys.sending);
    const res = await read(id, keys.sending);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id,
      sandbox: false,
      events: [{ type: 'message.accepted' }, { type: 'message.scheduled' }],
    });
  });

  it("is told of no message another key sent, as of another tenant's", async () => {
    const byFull = await sendWith(keys.full);
    const byOther = await sendWith(otherSending);
    const bySandbox = await sendWith(keys.sandbox);
    for (const id of [byFull, byOther, bySandbox]) {
      const res = await read(id, keys.sending);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: { code: 'not_found', message: `No message ${id} exists for this key.` } });
    }
    // The same answer as for an id that exists nowhere.
    const nowhere = 'msg_00000000000000000000000000';
    expect((await read(nowhere, keys.sending)).json()).toEqual({
      error: { code: 'not_found', message: `No message ${nowhere} exists for this key.` },
    });
  });

  it('leaves a full key reading every message of its tenant, and a sandbox key every sandbox one', async () => {
    const bySending = await sendWith(keys.sending);
    const bySandbox = await sendWith(keys.sandbox);
    expect((await read(bySending, keys.full)).json()).toMatchObject({ id: bySending, sandbox: false });
    expect((await read(bySandbox, keys.full)).json()).toMatchObject({ id: bySandbox, sandbox: true });
    expect((await read(bySending, keys.sandbox)).statusCode).toBe(404);
    expect((await read(bySandbox, keys.sandbox)).statusCode).toBe(200);
  });

  it('reads what it sent through every HTTP ingress, and the other sending key does not', async () => {
    const basic = (key: string) => `Basic ${Buffer.from(`api:${key}`).toString('base64')}`;
    const inject = (options: { url: string; headers: Record<string, string>; payload: object | string }) =>
      server.app.inject({ method: 'POST', ...options });
    const ids: Record<string, string[]> = {};

    const batch = await call('POST', '/v1/emails/batch', keys.sending, [draft(), draft()]);
    ids['native batch'] = batch.json<{ results: { id: string }[] }>().results.map((r) => r.id);

    const postmark = { 'x-postmark-server-token': keys.sending };
    const message = { To: 'r@example.com', Subject: 's', HtmlBody: '<p>h</p>' };
    ids['Style P'] = [
      (await inject({ url: '/email', headers: postmark, payload: message })).json<{ MessageID: string }>().MessageID,
    ];
    ids['Style P batch'] = (await inject({ url: '/email/batch', headers: postmark, payload: [message, message] }))
      .json<{ MessageID: string }[]>()
      .map((r) => r.MessageID);

    const sendgrid = await inject({
      url: '/v3/mail/send',
      headers: { authorization: `Bearer ${keys.sending}` },
      payload: {
        personalizations: [{ to: [{ email: 'r@example.com' }] }],
        from: { email: 'shop@sender.example' },
        subject: 's',
        content: [{ type: 'text/html', value: '<p>h</p>' }],
        send_at: Math.floor(Date.now() / 1000) + 3600,
      },
    });
    ids['Style S'] = [sendgrid.headers['x-message-id'] as string];

    const mailgun = await inject({
      url: '/v3/sender.example/messages',
      headers: { authorization: basic(keys.sending), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'from=shop%40sender.example&to=r%40example.com&to=s%40example.com&subject=s&html=%3Cp%3Eh%3C%2Fp%3E',
    });
    ids['Style M'] = (mailgun.headers['gatepost-message-ids'] as string).split(', ');

    for (const [ingress, sent] of Object.entries(ids)) {
      expect(sent.length, ingress).toBeGreaterThan(0);
      for (const id of sent) {
        expect((await read(id, keys.sending)).statusCode, `${ingress}: ${id}`).toBe(200);
        expect((await read(id, otherSending)).statusCode, `${ingress}: ${id}`).toBe(404);
      }
    }
  });
});

describe('a public key in sandbox mode', () => {
  it('sends through the browser SDK endpoint, and its message is captured, not delivered', async () => {
    const made = await call('POST', '/v1/templates', keys.full, {
      slug: 'try-out',
      to: 'inbox@shop.example',
      subject: 'From {{name}}',
      html: '<p>{{name}}</p>',
    });
    expect(made.statusCode).toBe(201);
    const sent = await server.app.inject({
      method: 'POST',
      url: '/api/v1.0/email/send',
      headers: { 'content-type': 'application/json' },
      payload: {
        user_id: keys.publicSandbox,
        service_id: 'default_service',
        template_id: 'try-out',
        template_params: { name: 'Ann' },
      },
    });
    expect(sent.statusCode).toBe(200);
    const id = sent.headers['gatepost-message-id'] as string;
    expect((await call('GET', `/v1/messages/${id}`, keys.full)).json()).toMatchObject({ id, sandbox: true });
  });
});

describe('the admin API', () => {
  it('makes keys with their scope and sandbox mode, and refuses what a kind cannot have', async () => {
    const tenant = (
      await server.app.inject({ method: 'GET', url: '/v1/admin/tenants', headers: { authorization: `Bearer ${ADMIN}` } })
    ).json<{
      data: { id: string }[];
    }>().data[0]!;
    const listed = await server.app.inject({
      method: 'GET',
      url: `/v1/admin/tenants/${tenant.id}/keys`,
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    // Listed by creation time, then id: keys made in the same millisecond come in either order.
    const kinds = (keys: unknown[][]) => keys.map((k) => JSON.stringify(k)).sort();
    expect(
      kinds(listed.json<{ data: { kind: string; scope: string; sandbox: boolean }[] }>().data.map((k) => [k.kind, k.scope, k.sandbox])),
    ).toEqual(
      kinds([
        ['live', 'full_access', false],
        ['live', 'sending_access', false],
        ['sandbox', 'sending_access', true],
        ['public', 'sending_access', false],
        ['public', 'sending_access', true],
        ['live', 'sending_access', false],
      ]),
    );
    for (const body of [
      { kind: 'sandbox', scope: 'full_access' },
      { kind: 'public', scope: 'full_access' },
      { kind: 'live', sandbox: true },
      { kind: 'sandbox', sandbox: false },
    ]) {
      const res = await server.app.inject({
        method: 'POST',
        url: `/v1/admin/tenants/${tenant.id}/keys`,
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: body,
      });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(code(res)).toBe('invalid_request');
    }
  });
});

describe('every keyed route, for every kind of key', () => {
  // Generated from the route table: a new route is in the matrix the day it is added.
  const keyed = () =>
    server.routes.flatMap((r) => (r.access === 'admin' || r.access === 'none' ? [] : [{ ...r, permission: r.access }]));

  it('covers the native API', () => {
    expect(keyed().length).toBeGreaterThan(20);
  });

  for (const holder of Object.keys(MAY) as Holder[]) {
    it(`answers a ${holder} key as its permissions say`, async () => {
      for (const r of keyed()) {
        // Any value for each path parameter: a route the key may call answers for the value
        // (found, not found, invalid), one it may not refuses before it looks.
        const url = r.url.replace(/:address/g, 'nobody@example.com').replace(/:[a-zA-Z]+/g, 'x');
        const res = await call(r.method, url, keys[holder], r.method === 'GET' || r.method === 'DELETE' ? undefined : {});
        const where = `${holder} ${r.method} ${r.url}`;
        if (MAY[holder].includes(r.permission)) {
          expect(res.statusCode, where).not.toBe(403);
          expect(res.statusCode, where).not.toBe(401);
          expect(res.statusCode, where).toBeLessThan(500);
        } else {
          expect(res.statusCode, where).toBe(403);
          expect(code(res), where).toBe(holder.startsWith('public') ? 'key_not_allowed' : 'insufficient_scope');
        }
      }
    });
  }
});
