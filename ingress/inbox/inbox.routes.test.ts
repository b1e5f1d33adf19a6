// The capture inbox's routes in process (Fastify inject): who may sign in, what a session reads,
// that a tenant sees only its own captures, the policy captured html is served under, and the
// inbox's paging, search and deletes.
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapturedMessage } from '../../store/catalog.port.ts';
import { AUTH_FAILURES_PER_MINUTE } from '../rest/auth.hooks.ts';
import { createTenant } from '../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { eventually } from '../../test/harness/gatepost.harness.ts';

let app: TestApp;

beforeAll(async () => {
  app = await buildApp('inbox', { actors: true, relay: true });
});
afterAll(() => app.close());

const inject = (opts: InjectOptions) => app.server.app.inject(opts);

/** A tenant with a live key and two sandbox keys. */
async function tenant(name = 'shop') {
  const t = await createTenant(app.catalog, { name, default_from: 'Shop <shop@example.com>' });
  const issue = async (kind: 'live' | 'sandbox') => (await app.keys.issue(t.id, kind, null)).secret;
  return { id: t.id, live: await issue('live'), sandbox: await issue('sandbox'), otherSandbox: await issue('sandbox') };
}

const signIn = (key: string) =>
  inject({
    method: 'POST',
    url: '/inbox/session',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ key }).toString(),
  });

/** The session cookie (name=value) a sign-in with this key sets. */
async function session(key: string): Promise<string> {
  const res = await signIn(key);
  expect(res.statusCode).toBe(303);
  const cookie = [res.headers['set-cookie']].flat()[0]!;
  return cookie.split(';')[0]!;
}

const get = (url: string, cookie: string) => inject({ method: 'GET', url, headers: { cookie } });

let seq = 0;
/** A capture put straight in the catalog, a second after the previous one. */
async function capture(tenantId: string, keyId: string | null, more: Partial<CapturedMessage> = {}): Promise<CapturedMessage> {
  seq++;
  const c: CapturedMessage = {
    message_id: `msg_${String(seq).padStart(26, '0')}`,
    tenant_id: tenantId,
    key_id: keyId,
    from: 'Shop <shop@example.com>',
    to: `user${seq}@example.com`,
    subject: `Order ${seq}`,
    html: `<p>Thanks for order ${seq}</p>`,
    text: null,
    headers: { 'Message-ID': `<${seq}@gatepost>` },
    captured_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    dkim: null,
    source: null,
    ...more,
  };
  await app.catalog.putCapture(c);
  return c;
}

const keyIdOf = async (tenantId: string, secret: string) => (await app.keys.resolve(secret)).key.id;

describe('signing in', () => {
  it('shows the sign-in form, under the pages’ own policy, to a browser without a session', async () => {
    const res = await inject({ method: 'GET', url: '/inbox' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('<form method="post" action="/inbox/session">');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('takes a sandbox key and sets an HttpOnly, SameSite=Strict session cookie that holds no key', async () => {
    const t = await tenant();
    const res = await signIn(t.sandbox);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/inbox');
    const cookie = [res.headers['set-cookie']].flat()[0]!;
    expect(cookie).toMatch(/^gatepost_inbox=[A-Za-z0-9_-]{40,};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/inbox');
    // Plain http here: Secure only when the request came over https.
    expect(cookie).not.toContain('Secure');
    expect(cookie).not.toContain(t.sandbox);
    const page = await get('/inbox', cookie.split(';')[0]!);
    expect(page.body).toContain('<script type="module" src="/inbox/assets/inbox.js"></script>');
    expect(page.body).toContain((await app.keys.resolve(t.sandbox)).key.prefix);
  });

  it('refuses a live key (key_not_allowed), an unknown or revoked key (invalid_api_key), with no cookie', async () => {
    const t = await tenant();
    const revoked = await app.keys.issue(t.id, 'sandbox', null);
    await app.keys.revoke(t.id, revoked.key.id);
    const publicSandbox = (await app.keys.issue(t.id, 'public', null, { sandbox: true })).secret;
    for (const [key, status, code] of [
      [t.live, 403, 'key_not_allowed'],
      [publicSandbox, 403, 'key_not_allowed'],
      [revoked.secret, 401, 'invalid_api_key'],
      ['gp_sandbox_nothing', 401, 'invalid_api_key'],
    ] as const) {
      const res = await signIn(key);
      expect(res.statusCode, key).toBe(status);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.body).toContain(`data-code="${code}"`);
      expect(res.body).toContain('<form method="post" action="/inbox/session">');
    }
  });

  it('counts failed sign-ins against the address: past the limit even the right key is refused, rate_limited', async () => {
    const own = await buildApp('inbox-limit');
    try {
      const t = await createTenant(own.catalog, { name: 'shop' });
      const key = (await own.keys.issue(t.id, 'sandbox', null)).secret;
      const post = (k: string) =>
        own.server.app.inject({
          method: 'POST',
          url: '/inbox/session',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ key: k }).toString(),
        });
      for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) expect((await post(`gp_sandbox_guess${i}`)).statusCode).toBe(401);
      const refused = await post(key);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.body).toContain('data-code="rate_limited"');
      expect(refused.headers['set-cookie']).toBeUndefined();
    } finally {
      await own.close();
    }
  });

  it('answers the JSON routes without a session with 401 in the error shape', async () => {
    for (const cookie of ['', 'gatepost_inbox=forged']) {
      const res = await get('/inbox/api/messages', cookie);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('missing_api_key');
    }
  });

  it('ends a session on sign-out, and the moment its key is revoked', async () => {
    const t = await tenant();
    const cookie = await session(t.sandbox);
    expect((await get('/inbox/api/messages', cookie)).statusCode).toBe(200);
    const out = await inject({ method: 'POST', url: '/inbox/session/end', headers: { cookie } });
    expect(out.statusCode).toBe(303);
    expect([out.headers['set-cookie']].flat()[0]).toMatch(/^gatepost_inbox=;/);
    expect((await get('/inbox/api/messages', cookie)).statusCode).toBe(401);

    const again = await session(t.sandbox);
    expect((await get('/inbox/api/messages', again)).statusCode).toBe(200);
    await app.keys.revoke(t.id, await keyIdOf(t.id, t.sandbox));
    expect((await get('/inbox/api/messages', again)).json().error.code).toBe('missing_api_key');
  });
});

describe('the inbox', () => {
  it('shows a tenant only its own captures', async () => {
    const [a, b] = [await tenant('a'), await tenant('b')];
    const mine = await capture(a.id, await keyIdOf(a.id, a.sandbox));
    const cookieB = await session(b.sandbox);
    expect((await get('/inbox/api/messages?scope=tenant', cookieB)).json()).toEqual({ data: [], next_cursor: null });
    for (const url of ['', '/html', '/raw']) {
      const res = await get(`/inbox/api/messages/${mine.message_id}${url}`, cookieB);
      expect(res.statusCode, url).toBe(404);
    }
    const deleted = await inject({
      method: 'DELETE',
      url: `/inbox/api/messages/${mine.message_id}`,
      headers: { cookie: cookieB },
    });
    expect(deleted.statusCode).toBe(404);
    expect(
      (await inject({ method: 'DELETE', url: '/inbox/api/messages?scope=tenant', headers: { cookie: cookieB } })).json(),
    ).toEqual({
      deleted: 0,
    });
    const cookieA = await session(a.sandbox);
    expect((await get('/inbox/api/messages?scope=tenant', cookieA)).json().data.map((m: { id: string }) => m.id)).toEqual([
      mine.message_id,
    ]);
  });

  it("keeps an inbox per key beside the tenant's, newest first, and pages it by cursor", async () => {
    const t = await tenant();
    const [one, two] = [await keyIdOf(t.id, t.sandbox), await keyIdOf(t.id, t.otherSandbox)];
    const ones = [];
    for (let i = 0; i < 5; i++) ones.push(await capture(t.id, one));
    const twos = [await capture(t.id, two), await capture(t.id, null)];
    const cookie = await session(t.sandbox);
    const ids = async (scope: string, limit: number) => {
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const query: string = `scope=${scope}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
        const page = (await get(`/inbox/api/messages?${query}`, cookie)).json();
        pages.push(page.data.map((m: { id: string }) => m.id));
        cursor = page.next_cursor;
      } while (cursor);
      return pages;
    };
    const newestFirst = (cs: CapturedMessage[]) => cs.map((c) => c.message_id).reverse();
    expect(await ids('key', 2)).toEqual([
      newestFirst(ones).slice(0, 2),
      newestFirst(ones).slice(2, 4),
      newestFirst(ones).slice(4),
    ]);
    expect((await ids('tenant', 100))[0]).toEqual(newestFirst([...ones, ...twos]));
    // The default scope is the key's own.
    expect((await get('/inbox/api/messages', cookie)).json().data).toHaveLength(5);
  });

  it('searches the recipient, the subject and the text (the html’s when none was given), any case', async () => {
    const t = await tenant();
    const key = await keyIdOf(t.id, t.sandbox);
    const ann = await capture(t.id, key, { to: 'Ann.Smith@shop.example', subject: 'Welcome' });
    const invoice = await capture(t.id, key, { subject: 'Your INVOICE #42' });
    const html = await capture(t.id, key, { html: '<p>Your parcel <b>ZX-81</b> ships</p>' });
    const text = await capture(t.id, key, { text: 'Reset code: quokka', html: '<p>nothing here</p>' });
    const other = await tenant('other');
    await capture(other.id, await keyIdOf(other.id, other.sandbox), { subject: 'invoice of another tenant' });
    const cookie = await session(t.sandbox);
    const found = async (q: string) =>
      (await get(`/inbox/api/messages?q=${encodeURIComponent(q)}`, cookie)).json().data.map((m: { id: string }) => m.id);
    expect(await found('ann.smith')).toEqual([ann.message_id]);
    expect(await found('invoice')).toEqual([invoice.message_id]);
    expect(await found('zx-81')).toEqual([html.message_id]);
    expect(await found('QUOKKA')).toEqual([text.message_id]);
    expect(await found('nothing here')).toEqual([]);
    expect(await found('order')).toEqual([text, html, invoice, ann].map((c) => c.message_id));
    expect(await found('%_"')).toEqual([]);
    for (const q of ['ab', 'ab%00cd', 'a'.repeat(201)]) {
      const refused = await get(`/inbox/api/messages?q=${q}`, cookie);
      expect(refused.statusCode, q).toBe(400);
      expect(refused.json().error.code).toBe('invalid_request');
    }
  });

  it('shows a sent message: its text, headers, links, timeline, its html under a strict policy, and its .eml', async () => {
    const t = await tenant();
    const sent = await inject({
      method: 'POST',
      url: '/v1/emails',
      headers: { authorization: `Bearer ${t.sandbox}` },
      payload: {
        to: 'ann@example.com',
        subject: 'Links inside',
        html: '<p>Hi <a href="https://shop.example/a?x=1">your order</a> <img src="https://track.example/p.gif"></p><script>alert(1)</script>',
        headers: { 'X-Campaign': 'spring' },
      },
    });
    expect(sent.statusCode).toBe(202);
    const id = sent.json().id as string;
    const cookie = await session(t.sandbox);
    // Captured, and the capture on its timeline.
    const m = await eventually(async () => {
      const res = await get(`/inbox/api/messages/${id}`, cookie);
      const body = res.json();
      return res.statusCode === 200 && body.status === 'sent' ? body : undefined;
    });
    expect(m).toMatchObject({ id, to: 'ann@example.com', subject: 'Links inside', remote_content: true, status: 'sent' });
    expect(m.text).toContain('your order');
    expect(m.links).toEqual([{ url: 'https://shop.example/a?x=1', text: 'your order' }]);
    expect(m.headers).toEqual(expect.arrayContaining([{ name: 'X-Campaign', value: 'spring' }]));
    expect(m.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['message.accepted', 'email.sent']));

    const html = await get(m.html_url, cookie);
    expect(html.statusCode).toBe(200);
    const policy = html.headers['content-security-policy'] as string;
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toContain('script-src');
    expect(policy).toContain("form-action 'none'");
    expect(policy).toMatch(/img-src data:;/);
    expect(policy).toMatch(/sandbox allow-popups allow-popups-to-escape-sandbox(;|$)/);
    expect(html.headers['x-content-type-options']).toBe('nosniff');
    expect(html.body).toContain('<a href="https://shop.example/a?x=1">');
    const withImages = await get(`${m.html_url}?images=remote`, cookie);
    expect(withImages.headers['content-security-policy']).toContain('img-src data: https: http:');

    const raw = await get(m.raw_url, cookie);
    expect(raw.headers['content-type']).toBe('message/rfc822');
    expect(raw.headers['content-disposition']).toBe(`attachment; filename="${id}.eml"`);
    expect(raw.body).toMatch(/^Subject: Links inside\r$/m);
    expect(raw.body).toMatch(/^X-Campaign: spring\r$/m);
    expect(raw.body).toContain('multipart/alternative');
  });

  it("deletes one capture, then all of a key's, leaving the others' inboxes", async () => {
    const t = await tenant();
    const [one, two] = [await keyIdOf(t.id, t.sandbox), await keyIdOf(t.id, t.otherSandbox)];
    const first = await capture(t.id, one, { subject: 'Deleted soon' });
    await capture(t.id, one);
    const theirs = await capture(t.id, two);
    const cookie = await session(t.sandbox);
    const del = (url: string) => inject({ method: 'DELETE', url, headers: { cookie } });
    expect((await del(`/inbox/api/messages/${first.message_id}`)).statusCode).toBe(204);
    expect((await get(`/inbox/api/messages/${first.message_id}`, cookie)).statusCode).toBe(404);
    expect((await del(`/inbox/api/messages/${first.message_id}`)).json().error.code).toBe('not_found');
    expect((await del('/inbox/api/messages?scope=key')).json()).toEqual({ deleted: 1 });
    expect((await get('/inbox/api/messages?scope=tenant', cookie)).json().data.map((m: { id: string }) => m.id)).toEqual([
      theirs.message_id,
    ]);
    // A deleted capture is gone from the search too.
    expect((await get(`/inbox/api/messages?scope=tenant&q=${encodeURIComponent(first.subject)}`, cookie)).json().data).toEqual(
      [],
    );
  });

  it("streams new captures of the key's inbox as server-sent events, read from the catalog, until the key is revoked", async () => {
    // No capture path of this process wakes the stream here (the app is given none): the capture
    // reaches it by the stream's reading of the catalog, as another process's does on Dapr.
    const t = await tenant();
    const [mine, theirs] = [await keyIdOf(t.id, t.sandbox), await keyIdOf(t.id, t.otherSandbox)];
    const cookie = await session(t.sandbox);
    const url = await app.server.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${url}/inbox/api/stream?scope=key`, { headers: { cookie } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    const until = async (text: string) => {
      while (!seen.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${text}: ${seen}`);
        seen += value;
      }
    };
    await until(': open');
    await capture(t.id, theirs, { subject: 'Not for this inbox' });
    const c = await capture(t.id, mine, { subject: 'Streamed' });
    // Its summary's last field, and the event's end.
    await until(`"captured_at":"${c.captured_at}"}\n\n`);
    const events = seen.split('\n\n').filter((e) => e.startsWith('event: capture'));
    expect(events.map((e) => JSON.parse(e.split('data: ')[1]!))).toEqual([
      { id: c.message_id, key_id: mine, from: c.from, to: c.to, subject: 'Streamed', captured_at: c.captured_at },
    ]);
    // Revoking the key ends the session, and the stream with it.
    await app.keys.revoke(t.id, mine);
    for (;;) if ((await reader.read()).done) break;
  });

  it('documents its JSON routes under the session cookie, and hides its pages, assets and stream', async () => {
    const doc = (await inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/inbox/api/messages'].get.security).toEqual([{ inboxSession: [] }]);
    expect(Object.keys(doc.paths['/inbox/api/messages/{id}'])).toEqual(['get', 'delete']);
    for (const hidden of ['/inbox', '/inbox/session', '/inbox/api/stream', '/inbox/api/messages/{id}/html']) {
      expect(doc.paths[hidden], hidden).toBeUndefined();
    }
    const css = await inject({ method: 'GET', url: '/inbox/assets/inbox.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toContain('text/css');
  });
});
