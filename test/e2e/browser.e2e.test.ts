// The browser SDK ingress as a page uses it: the official @emailjs/browser client, unchanged, in
// a real headless Chromium, on pages served from their own origins, against a started Gatepost
// delivering to a real SMTP relay. What each test asserts is what a user sees: the answer the
// client hands the page, and the mail at the relay (or in the sandbox inbox), or none.
import { request as httpRequest } from 'node:http';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { launchChromium, openPage, startPageServer, type Chromium, type PageServer } from '../harness/browser.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();
let chromium: Chromium;
let context: BrowserContext;
/** The shop's pages: the origin its keys allow. */
let shop: PageServer;
/** Someone else's pages, with a copy of the shop's key. */
let elsewhere: PageServer;

beforeAll(async () => {
  [shop, elsewhere] = await Promise.all([startPageServer(), startPageServer()]);
  chromium = await launchChromium();
  context = chromium.context;
});
afterAll(async () => {
  await chromium?.close();
  await Promise.all([shop?.close(), elsewhere?.close()]);
});

const unique = (stem: string) => `${stem}-${Math.random().toString(36).slice(2, 10)}`;

/** A template storing its recipient, made with the tenant's live key; answers its slug. */
async function template(live: string, fields: { to?: string; subject?: string; html?: string }): Promise<string> {
  const slug = unique('contact');
  const res = await suite.gp.request('POST', '/v1/templates', {
    key: live,
    body: { slug, subject: fields.subject ?? `Contact ${slug}`, html: fields.html ?? '<p>{{message}}</p>', to: fields.to },
  });
  expect(res.status).toBe(201);
  return slug;
}

/** A public key of the tenant with browser settings. */
async function publicKey(tenantId: string, settings: Record<string, unknown> = {}): Promise<string> {
  const res = await suite.gp.admin('POST', `/tenants/${tenantId}/keys`, { kind: 'public', ...settings });
  expect(res.status).toBe(201);
  return res.body.key;
}

/** What @emailjs/browser hands the page: its EmailJSResponseStatus, or the error fetch threw. */
type Seen = { status: number; text: string } | { error: string };

interface Call {
  key: string;
  template: string;
  service?: string;
  params?: Record<string, unknown>;
}

/**
 * `emailjs.send` (with the params), or `emailjs.sendForm` on the page's contact form (with extra
 * inputs added first), in the page, the SDK's `origin` pointed at Gatepost.
 */
function sdk(page: Page, method: 'send' | 'sendForm', call: Call & { inputs?: Record<string, string> }): Promise<Seen> {
  return page.evaluate(
    async ({ url, method, key, service, template, params, inputs }) => {
      const emailjs = (globalThis as any).emailjs;
      const form = document.querySelector('#contact') as HTMLFormElement;
      for (const [name, value] of Object.entries(inputs)) {
        const input = document.createElement('input');
        input.name = name;
        input.value = value;
        form.append(input);
      }
      emailjs.init({ publicKey: key, origin: url });
      try {
        const r = await (method === 'send' ? emailjs.send(service, template, params) : emailjs.sendForm(service, template, form));
        return { status: r.status, text: r.text };
      } catch (e: any) {
        return e instanceof Error ? { error: e.message } : { status: e.status, text: e.text };
      }
    },
    { url: suite.gp.url, method, service: 'default_service', params: {}, inputs: {}, ...call },
  );
}

const sdkSend = (page: Page, call: Call) => sdk(page, 'send', call);
const sdkSendForm = (page: Page, call: Call & { inputs?: Record<string, string> }) => sdk(page, 'sendForm', call);

/** The one mail the relay received with this subject, once it has arrived. */
const delivered = (subject: string) =>
  eventually(() => {
    const mails = suite.relay.received.filter((r) => r.parsed.subject === subject);
    return mails.length > 0 ? mails : undefined;
  });

/**
 * Lets Gatepost deliver what it committed: a later mail sent now through the same tenant is waited
 * for, so a message committed before it has had its chance to reach the relay.
 */
const settle = (live: string) =>
  laterMailArrived(suite, async (to) => {
    const res = await suite.gp.request('POST', '/v1/emails', { key: live, body: { to, subject: 'Later', html: '<p>later</p>' } });
    expect(res.status).toBe(202);
  });

/** Nothing reached the relay for `subject`. */
async function nothingDelivered(live: string, subject: string): Promise<void> {
  await settle(live);
  expect(suite.relay.received.filter((r) => r.parsed.subject === subject)).toEqual([]);
}

/** A POST to the browser endpoint from Node: any Origin, and the client IP chosen (all of 127/8 is local). */
function post(
  path: string,
  body: unknown,
  opts: { origin?: string; localAddress?: string } = {},
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(path, suite.gp.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        localAddress: opts.localAddress,
        headers: { 'content-type': 'application/json', ...(opts.origin ? { origin: opts.origin } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('@emailjs/browser against Gatepost, in Chromium', () => {
  it('sends the stored template to its stored recipient and answers 200 "OK"', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Thanks');
    const slug = await template(t.live, { to: 'Shop Inbox <inbox@shop.example>', subject: `${subject} {{name}}` });
    const key = await publicKey(t.id, { allowed_origins: [shop.origin] });
    const page = await openPage(context, shop.origin);

    expect(await sdkSend(page, { key, template: slug, params: { name: 'Ann', message: 'I <3 your shop' } })).toEqual({
      status: 200,
      text: 'OK',
    });
    const [mail] = await delivered(`${subject} Ann`);
    expect(mail!.to).toEqual(['inbox@shop.example']);
    expect(mail!.parsed.to).toMatchObject({ value: [{ name: 'Shop Inbox', address: 'inbox@shop.example' }] });
    expect(mail!.parsed.html).toContain('I &lt;3 your shop');
  });

  it('sends a form: its inputs fill the template', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Form');
    const slug = await template(t.live, {
      to: 'inbox@shop.example',
      subject: `${subject} from {{name}}`,
      html: '<p>{{message}}</p>',
    });
    const page = await openPage(context, shop.origin);
    expect(await sdkSendForm(page, { key: await publicKey(t.id), template: slug })).toEqual({ status: 200, text: 'OK' });
    const [mail] = await delivered(`${subject} from Ann`);
    expect(mail!.to).toEqual(['inbox@shop.example']);
    expect(mail!.parsed.html).toContain('Hello from the page');
  });

  it('never mails an address the page chose: params named to_email, cc, bcc, reply_to are only data', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Chosen');
    const slug = await template(t.live, {
      to: 'inbox@shop.example',
      subject,
      html: '<p>Reply to {{reply_to}} / {{to_email}}</p>',
    });
    const key = await publicKey(t.id);
    const page = await openPage(context, shop.origin);
    const chosen = {
      to: 'victim@elsewhere.example',
      to_email: 'victim@elsewhere.example',
      cc: 'cc@elsewhere.example',
      bcc: ['bcc@elsewhere.example'],
      reply_to: 'attacker@elsewhere.example',
    };
    expect(await sdkSend(page, { key, template: slug, params: chosen })).toEqual({ status: 200, text: 'OK' });
    expect(await sdkSendForm(page, { key, template: slug, inputs: { ...chosen, bcc: 'bcc@elsewhere.example' } })).toEqual({
      status: 200,
      text: 'OK',
    });

    const mails = await eventually(() => {
      const m = suite.relay.received.filter((r) => r.parsed.subject === subject);
      return m.length === 2 ? m : undefined;
    });
    for (const mail of mails) {
      expect(mail.to).toEqual(['inbox@shop.example']);
      expect(mail.parsed.cc).toBeUndefined();
      expect(mail.parsed.bcc).toBeUndefined();
      expect(mail.parsed.replyTo).toBeUndefined();
      expect(mail.parsed.html).toContain('Reply to attacker@elsewhere.example / victim@elsewhere.example');
    }
    expect(suite.relay.received.some((r) => r.to.some((a) => a.endsWith('@elsewhere.example')))).toBe(false);
  });

  it('refuses a request that names an address beside the template params (400), sending nothing', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Extra');
    const slug = await template(t.live, { to: 'inbox@shop.example', subject });
    const key = await publicKey(t.id);
    const page = await openPage(context, shop.origin);
    // What a hand-written page (not the SDK) could post: the EmailJS body plus fields of its own.
    const answers = await page.evaluate(
      async ({ url, base }) =>
        Promise.all(
          ['to', 'cc', 'bcc', 'reply_to', 'to_email'].map(async (field) => {
            const res = await fetch(`${url}/api/v1.0/email/send`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ ...base, [field]: 'victim@elsewhere.example' }),
            });
            return { status: res.status, text: await res.text() };
          }),
        ),
      { url: suite.gp.url, base: { lib_version: '4.4.1', user_id: key, service_id: 'default_service', template_id: slug } },
    );
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 400]);
    expect(answers[0]!.text).toBe('The to parameter is not supported: the template decides the message and its recipient');
    await nothingDelivered(t.live, subject);
  });

  it('refuses an origin the key does not allow: the page sees a CORS failure, and nothing is sent', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Origin');
    const slug = await template(t.live, { to: 'inbox@shop.example', subject });
    const key = await publicKey(t.id, { allowed_origins: [shop.origin] });

    const foreign = await openPage(context, elsewhere.origin);
    expect(await sdkSend(foreign, { key, template: slug })).toEqual({ error: 'Failed to fetch' });
    // A form post is a "simple" request, sent without a preflight: the server itself must refuse.
    expect(await sdkSendForm(foreign, { key, template: slug })).toEqual({ error: 'Failed to fetch' });

    const direct = await post(
      '/api/v1.0/email/send',
      { user_id: key, service_id: 'default_service', template_id: slug },
      { origin: elsewhere.origin },
    );
    expect(direct.status).toBe(403);
    expect(direct.headers['access-control-allow-origin']).toBeUndefined();
    expect(direct.headers['gatepost-error-code']).toBe('origin_not_allowed');
    await nothingDelivered(t.live, subject);

    // The same key, from its own origin, works; its answer may be read there (no credentials, no *).
    const home = await post(
      '/api/v1.0/email/send',
      { user_id: key, service_id: 'default_service', template_id: slug },
      { origin: shop.origin },
    );
    expect(home).toMatchObject({ status: 200, text: 'OK' });
    expect(home.headers['access-control-allow-origin']).toBe(shop.origin);
    expect(home.headers['access-control-allow-credentials']).toBeUndefined();
    expect(home.headers.vary).toContain('Origin');
    expect(await sdkSend(await openPage(context, shop.origin), { key, template: slug })).toEqual({ status: 200, text: 'OK' });
  });

  it('refuses a suppressed recipient with 422', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Suppressed');
    const to = `${unique('gone')}@shop.example`;
    const slug = await template(t.live, { to, subject });
    expect((await suite.gp.request('POST', '/v1/suppressions', { key: t.live, body: { address: to } })).status).toBe(201);
    const page = await openPage(context, shop.origin);
    expect(await sdkSend(page, { key: await publicKey(t.id), template: slug })).toEqual({
      status: 422,
      text: `${to} is suppressed (manual); the message was not sent.`,
    });
    await nothingDelivered(t.live, subject);
  });

  it('refuses a form carrying a file (422), never sending it without; an empty file input is no attachment', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Attachment');
    const slug = await template(t.live, { to: 'inbox@shop.example', subject });
    const key = await publicKey(t.id);
    const page = await openPage(context, shop.origin);
    await page.setInputFiles('input[name=upload]', {
      name: 'cv.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.from('%PDF-1.4'),
    });
    expect(await sdkSendForm(page, { key, template: slug })).toEqual({
      status: 422,
      text: 'Attachments are not supported; the message was not sent.',
    });
    await nothingDelivered(t.live, subject);

    const empty = await openPage(context, shop.origin);
    expect(await sdkSendForm(empty, { key, template: slug })).toEqual({ status: 200, text: 'OK' });
    await delivered(subject);
  });

  it('refuses a template that stores no recipient (422)', async () => {
    const t = await suite.gp.tenant();
    const slug = await template(t.live, {});
    const page = await openPage(context, shop.origin);
    const seen = await sdkSend(page, { key: await publicKey(t.id), template: slug });
    expect(seen).toMatchObject({ status: 422 });
    expect((seen as { text: string }).text).toMatch(
      /^The recipients address is empty: The template "contact-\w+" stores no recipient\./,
    );
  });

  it('refuses an unknown key and an unknown template with 400, and a live key with 403', async () => {
    const t = await suite.gp.tenant();
    const slug = await template(t.live, { to: 'inbox@shop.example' });
    const page = await openPage(context, shop.origin);
    expect(await sdkSend(page, { key: 'gp_public_unknown', template: slug })).toEqual({
      status: 400,
      text: 'The Public Key is invalid. No public key has that value, or it was revoked.',
    });
    expect(await sdkSend(page, { key: t.publicKey, template: 'no-such-template' })).toEqual({
      status: 400,
      text: 'The template ID not found. No template has the slug "no-such-template".',
    });
    expect(await sdkSend(page, { key: t.live, template: slug })).toEqual({
      status: 403,
      text: 'The browser SDK endpoints take a public key (gp_public_), never a live key.',
    });
    expect(await sdkSend(page, { key: t.publicKey, template: slug, service: 'service_x1y2z3' })).toEqual({
      status: 400,
      text: 'The service ID is invalid: use default_service (or transactional, or broadcast)',
    });
  });

  it('with a sandbox key runs the whole pipeline and captures the mail, delivering nothing', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Sandbox');
    const slug = await template(t.live, { to: 'inbox@shop.example', subject });
    const page = await openPage(context, shop.origin);
    expect(await sdkSend(page, { key: t.sandbox, template: slug, params: { message: 'test drive' } })).toEqual({
      status: 200,
      text: 'OK',
    });
    const captured = await eventually(async () => {
      const inbox = await suite.gp.request('GET', '/v1/sandbox/messages', { key: t.sandbox });
      return inbox.body.data.find((m: { subject: string }) => m.subject === subject);
    });
    expect(captured).toMatchObject({ to: 'inbox@shop.example', html: '<p>test drive</p>' });
    await nothingDelivered(t.live, subject);
  });

  it('answers 429 "Too Many Requests" over the per-IP rate, which the page can read', async () => {
    const t = await suite.gp.tenant();
    const slug = await template(t.live, { to: 'inbox@shop.example' });
    const key = await publicKey(t.id, { rate_limit: { per_ip: 2 } });
    const page = await openPage(context, shop.origin);
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await sdkSend(page, { key, template: slug }));
    expect(seen).toEqual([
      { status: 200, text: 'OK' },
      { status: 200, text: 'OK' },
      { status: 429, text: 'Too Many Requests' },
    ]);
  });
});

describe('the browser SDK endpoints from Node', () => {
  it('name the message they made: its timeline says it came from a browser, on the stream service_id names', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Broadcast');
    const slug = await template(t.live, { to: 'inbox@shop.example', subject });
    const res = await post('/api/v1.0/email/send', { user_id: t.publicKey, service_id: 'broadcast', template_id: slug });
    expect(res).toMatchObject({ status: 200, text: 'OK' });
    const id = res.headers['gatepost-message-id'] as string;
    expect(id).toMatch(/^msg_/);
    await delivered(subject);
    const message = await suite.gp.request('GET', `/v1/messages/${id}`, { key: t.live });
    expect(message.body).toMatchObject({ to: 'inbox@shop.example', stream: 'broadcast', sandbox: false });
    expect(message.body.events[0]).toMatchObject({
      type: 'message.accepted',
      data: { ingress: 'browser', stream: 'broadcast', to: 'inbox@shop.example' },
    });
  });

  it('answer a retry with the same Idempotency-Key without sending again', async () => {
    const t = await suite.gp.tenant();
    const subject = unique('Once');
    const slug = await template(t.live, { to: 'inbox@shop.example', subject });
    const send = () =>
      fetch(`${suite.gp.url}/api/v1.0/email/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `order-${subject}` },
        body: JSON.stringify({ user_id: t.publicKey, service_id: 'default_service', template_id: slug }),
      });
    const [first, second] = [await send(), await send()];
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('gatepost-message-id')).toBe(first.headers.get('gatepost-message-id'));
    await delivered(subject);
    await settle(t.live);
    expect(suite.relay.received.filter((r) => r.parsed.subject === subject)).toHaveLength(1);
  });
});

describe('browser rate limits', () => {
  const body = (key: string, slug: string) => ({ user_id: key, service_id: 'default_service', template_id: slug });

  it('limit each client IP of a key, and the key as a whole', async () => {
    const t = await suite.gp.tenant();
    const slug = await template(t.live, { to: 'inbox@shop.example' });
    const key = await publicKey(t.id, { rate_limit: { per_key: 3, per_ip: 2 } });
    const from = (ip: string) => post('/api/v1.0/email/send', body(key, slug), { localAddress: ip });

    expect((await from('127.0.0.1')).status).toBe(200);
    expect((await from('127.0.0.1')).status).toBe(200);
    const perIp = await from('127.0.0.1');
    expect(perIp).toMatchObject({ status: 429, text: 'Too Many Requests' });
    // 2 a minute: the next send is 30 s away.
    expect(Number(perIp.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(perIp.headers['retry-after'])).toBeLessThanOrEqual(30);

    // Another visitor still may, until the key's own limit (3) is reached.
    expect((await from('127.0.0.2')).status).toBe(200);
    expect(await from('127.0.0.3')).toMatchObject({ status: 429, text: 'Too Many Requests' });
  });

  it('are set and changed on the key through the admin API', async () => {
    const t = await suite.gp.tenant();
    const slug = await template(t.live, { to: 'inbox@shop.example' });
    const created = await suite.gp.admin('POST', `/tenants/${t.id}/keys`, {
      kind: 'public',
      allowed_origins: ['HTTPS://Shop.Example:443/'],
      rate_limit: { per_ip: 1 },
    });
    expect(created.body).toMatchObject({ allowed_origins: ['https://shop.example'], rate_limit: { per_key: null, per_ip: 1 } });
    const send = () => post('/api/v1.0/email/send', body(created.body.key, slug), { origin: 'https://shop.example' });
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(429);

    const patched = await suite.gp.admin('PATCH', `/tenants/${t.id}/keys/${created.body.id}`, {
      rate_limit: { per_ip: 100 },
      allowed_origins: [],
    });
    expect(patched.body).toMatchObject({ allowed_origins: [], rate_limit: { per_key: null, per_ip: 100 } });
    expect((await send()).status).toBe(200);

    const live = await suite.gp.admin('POST', `/tenants/${t.id}/keys`, { kind: 'live', allowed_origins: ['https://a.example'] });
    expect(live.status).toBe(400);
    const bad = await suite.gp.admin('POST', `/tenants/${t.id}/keys`, {
      kind: 'public',
      allowed_origins: ['https://a.example/path'],
    });
    expect(bad.status).toBe(400);
  });
});
