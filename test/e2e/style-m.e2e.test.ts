// Style M: the official mailgun.js client, pointed at a started Gatepost, sends as it would to
// Mailgun; the mail arrives at the relay, the timeline shows it, and every refusal comes back as
// mailgun.js's error with Mailgun's status and message.
import NodeFormData from 'form-data';
import { createRequire } from 'node:module';
import Mailgun from 'mailgun.js';
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { observe, refusalOf, uniqueAddress } from '../harness/compat.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();
// mailparser's own header decoder: nodemailer writes a header value holding quotes as RFC 2047 words.
const libmime = createRequire(import.meta.url)('libmime') as { decodeWords(value: string): string };
const DOMAIN = 'mg.sender.example';

/** mailgun.js as a user points it at Gatepost: user `api`, the key, Gatepost's base URL. */
const mailgun = (key: string, formData: unknown = FormData) =>
  new Mailgun(formData as typeof FormData).client({ username: 'api', key, url: suite.gp.url });

type MessageData = Parameters<ReturnType<typeof mailgun>['messages']['create']>[1];
interface MailgunError {
  status: number;
  details: string;
  type: string;
}

const { receivedFor, delivered, sent, captured, allCaptured } = observe(suite);
const refusal = (send: Promise<unknown>) => refusalOf<MailgunError>(send);
const idOf = (mailgunId: string) => /^<(msg_[0-9a-z]{26})@/.exec(mailgunId)![1]!;
const send = (key: string, data: Record<string, unknown>) => mailgun(key).messages.create(DOMAIN, data as MessageData);

/** The raw wire, urlencoded, for what the client does not send (repeated fields, plain forms). */
const form = (key: string, fields: [string, string][], headers: Record<string, string> = {}) =>
  suite.gp.request('POST', `/v3/${DOMAIN}/messages`, {
    body: new URLSearchParams(fields).toString(),
    headers: {
      authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
  });

describe('Style M: mailgun.js against POST /v3/:domain/messages', () => {
  it('sends one message per recipient, each with the cc, headers, variables and tags', async () => {
    const [a, b, copy] = [uniqueAddress('ann'), uniqueAddress('bob'), uniqueAddress('cc')];
    const result = await send(suite.tenant.live, {
      from: 'Sender, Inc. <news@sender.example>',
      to: [a, `Bob Reader <${b}>`],
      cc: copy,
      subject: 'Hello',
      text: 'Plain hello.',
      html: '<p>Hello</p>',
      'h:X-Campaign': 'spring',
      'h:Reply-To': 'help@sender.example',
      'v:order': '4711',
      'o:tag': ['welcome', 'onboarding'],
    });
    expect(result).toMatchObject({ status: 200, message: 'Queued. Thank you.' });
    expect(result.id).toMatch(new RegExp(`^<msg_[0-9a-z]{26}@${DOMAIN.replace(/\./g, '\\.')}>$`));

    const [ma, mb] = [await receivedFor(a), await receivedFor(b)];
    expect(ma.parsed.to).toMatchObject({ value: [{ address: a }] });
    expect(mb.parsed.to).toMatchObject({ value: [{ name: 'Bob Reader', address: b }] });
    expect(ma.parsed.cc).toMatchObject({ value: [{ address: copy }] });
    expect(ma.parsed.from?.value[0]).toEqual({ name: 'Sender, Inc.', address: 'news@sender.example' });
    expect(ma.parsed.subject).toBe('Hello');
    expect(ma.parsed.text?.trim()).toBe('Plain hello.');
    expect(ma.parsed.html).toContain('<p>Hello</p>');
    expect(ma.parsed.replyTo?.value[0]?.address).toBe('help@sender.example');
    expect(ma.parsed.headers.get('x-campaign')).toBe('spring');
    // Custom data (v:) goes out in X-Mailgun-Variables, as Mailgun sends it.
    expect(JSON.parse(libmime.decodeWords(String(ma.parsed.headers.get('x-mailgun-variables'))))).toEqual({ order: '4711' });
    await eventually(() => delivered(copy) === 2);

    const t = await sent(idOf(result.id!));
    expect(t.to).toBe(a);
    expect(t.tags).toEqual(['welcome', 'onboarding']);
    expect(t.events[0].data).toMatchObject({ ingress: 'style_m', sandbox: false });
  });

  it('fills %recipient.x% from recipient-variables, each recipient with its own', async () => {
    const [a, b] = [uniqueAddress('batch-a'), uniqueAddress('batch-b')];
    await send(suite.tenant.live, {
      from: 'app@sender.example',
      to: [a, b],
      subject: 'Hi %recipient.first%',
      html: '<p>Your code: %recipient.code%</p>',
      'recipient-variables': JSON.stringify({ [a]: { first: 'Ann', code: 'A1' }, [b]: { first: 'Bob', code: 'B2' } }),
    });
    const [ma, mb] = [await receivedFor(a), await receivedFor(b)];
    expect([ma.parsed.subject, mb.parsed.subject]).toEqual(['Hi Ann', 'Hi Bob']);
    expect(ma.parsed.html).toContain('Your code: A1');
    expect(mb.parsed.html).toContain('Your code: B2');
  });

  it("takes Mailgun's limit of 1000 recipients in one request, and refuses 1001", async () => {
    const to = (n: number) => Array.from({ length: n }, (_, i) => `many${i}@example.com`);
    const mail = { from: 'app@sender.example', subject: 'many', html: '<p>many</p>' };
    expect(await send(suite.tenant.sandbox, { ...mail, to: to(1000) })).toMatchObject({ status: 200 });
    await allCaptured(suite.tenant.sandbox, to(1000));
    const tooMany = await refusal(send(suite.tenant.sandbox, { ...mail, to: to(1001) }));
    expect(tooMany).toMatchObject({ status: 400, details: "'to' parameter allows at most 1000 recipients" });
  });

  it('refuses the whole request when one recipient is suppressed: nothing is sent', async () => {
    const [a, gone, c] = [uniqueAddress('all-a'), uniqueAddress('gone'), uniqueAddress('all-c')];
    await suite.gp.request('POST', '/v1/suppressions', { key: suite.tenant.live, body: { address: gone } });
    const error = await refusal(
      send(suite.tenant.live, { from: 'app@sender.example', to: [a, gone, c], subject: 's', html: '<p>h</p>' }),
    );
    expect(error).toMatchObject({ status: 400, type: 'MailgunAPIError' });
    expect(error.details).toContain(`${gone} is suppressed`);
    await laterMailArrived(suite);
    expect(delivered(a) + delivered(gone) + delivered(c)).toBe(0);
  });

  it('refuses the whole request when one address in a comma-separated list is bad', async () => {
    const [a, c] = [uniqueAddress('list-a'), uniqueAddress('list-c')];
    const error = await refusal(
      send(suite.tenant.live, { from: 'app@sender.example', to: `${a}, not-an-address, ${c}`, subject: 's', text: 'h' }),
    );
    expect(error.status).toBe(400);
    expect(error.details).toBe("'to' parameter is invalid: not a valid email address (not-an-address)");
    await laterMailArrived(suite);
    expect(delivered(a) + delivered(c)).toBe(0);
  });

  it('refuses attachments and inline files in its own error format, never sending without them', async () => {
    const to = uniqueAddress('attach');
    for (const files of [
      { attachment: [{ filename: 'hello.txt', data: Buffer.from('hello') }] },
      { inline: [{ filename: 'logo.png', data: Buffer.from('png') }] },
    ]) {
      const error = await refusal(
        send(suite.tenant.live, { from: 'app@sender.example', to, subject: 's', html: '<p>h</p>', ...files }),
      );
      expect(error).toMatchObject({ status: 400, details: 'Attachments are not supported; the message was not sent.' });
    }
    await laterMailArrived(suite);
    expect(delivered(to)).toBe(0);
  });

  it('answers a bad key with a plain-text 401 Forbidden, and a public key with 403', async () => {
    const mail = { from: 'app@sender.example', to: uniqueAddress('auth'), subject: 's', html: '<p>h</p>' };
    expect(await refusal(send('gp_live_not-a-key', mail))).toMatchObject({ status: 401, details: 'Forbidden' });
    const wrongUser = await suite.gp.request('POST', `/v3/${DOMAIN}/messages`, {
      body: 'to=x%40example.com',
      headers: {
        authorization: `Basic ${Buffer.from(`user:${suite.tenant.live}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    expect(wrongUser.status).toBe(401);
    expect(wrongUser.body).toBe('Forbidden');
    expect(wrongUser.headers.get('content-type')).toMatch(/^text\/plain/);
    const publicKey = await refusal(send(suite.tenant.publicKey, mail));
    expect(publicKey.status).toBe(403);
    expect(publicKey.details).toMatch(/browser SDK/);
  });

  it('captures sandbox sends (a sandbox key, or o:testmode with a live key): nothing reaches the relay', async () => {
    const [viaKey, viaMode] = [uniqueAddress('sandbox-key'), uniqueAddress('testmode')];
    const byKey = await send(suite.tenant.sandbox, {
      from: 'app@sender.example',
      to: viaKey,
      subject: 'Sandboxed',
      html: '<p>1</p>',
    });
    const byMode = await send(suite.tenant.live, {
      from: 'app@sender.example',
      to: viaMode,
      subject: 'Test mode',
      html: '<p>2</p>',
      'o:testmode': true,
    });
    expect([byKey.status, byMode.status]).toEqual([200, 200]);
    expect((await captured(suite.tenant.sandbox, viaKey)).subject).toBe('Sandboxed');
    expect((await captured(suite.tenant.live, viaMode)).subject).toBe('Test mode');
    await laterMailArrived(suite);
    expect(delivered(viaKey) + delivered(viaMode)).toBe(0);
  });

  it('renders a Gatepost template named by template, with t:variables or h:X-Mailgun-Variables', async () => {
    const created = await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug: 'order-shipped', subject: 'Order {{order}} shipped', html: '<p>Hi {{name}}</p>' },
    });
    expect(created.status).toBe(201);
    const [a, b] = [uniqueAddress('tpl-a'), uniqueAddress('tpl-b')];
    await send(suite.tenant.live, {
      from: 'shop@sender.example',
      to: a,
      template: 'order-shipped',
      't:variables': JSON.stringify({ order: 'A-17', name: 'Ann & Bob' }),
    });
    await send(suite.tenant.live, {
      from: 'shop@sender.example',
      to: b,
      template: 'order-shipped',
      'h:X-Mailgun-Variables': JSON.stringify({ order: 'B-2', name: 'Bea' }),
    });
    const [ma, mb] = [await receivedFor(a), await receivedFor(b)];
    expect(ma.parsed.subject).toBe('Order A-17 shipped');
    expect(ma.parsed.html).toContain('<p>Hi Ann &amp; Bob</p>');
    expect(mb.parsed.subject).toBe('Order B-2 shipped');

    const unknown = await refusal(send(suite.tenant.live, { from: 'shop@sender.example', to: a, template: 'nope' }));
    expect(unknown).toMatchObject({ status: 400, details: 'No template has the slug "nope".' });
  });

  it('works with the form-data package too, and takes urlencoded forms with repeated fields', async () => {
    const viaPackage = uniqueAddress('form-data');
    const result = await mailgun(suite.tenant.live, NodeFormData).messages.create(DOMAIN, {
      from: 'app@sender.example',
      to: [viaPackage],
      subject: 'form-data',
      html: '<p>form-data</p>',
    });
    expect(result.status).toBe(200);
    expect((await receivedFor(viaPackage)).parsed.subject).toBe('form-data');

    const [a, b] = [uniqueAddress('url-a'), uniqueAddress('url-b')];
    const res = await form(suite.tenant.live, [
      ['from', 'app@sender.example'],
      ['to', a],
      ['to', b],
      ['subject', 'urlencoded'],
      ['text', 'Line one\nLine <two>'],
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get('gatepost-message-ids')!.split(', ')).toHaveLength(2);
    const mb = await receivedFor(b);
    expect(mb.parsed.subject).toBe('urlencoded');
    // A text-only message gets an HTML part made from its text.
    expect(mb.parsed.html).toContain('Line one\nLine &lt;two&gt;');
    expect(mb.parsed.text?.trim()).toBe('Line one\nLine <two>');
  });

  it('schedules with o:deliverytime, and a retry with the same Idempotency-Key sends nothing twice', async () => {
    const at = new Date(Date.now() + 3600_000);
    at.setMilliseconds(0);
    const later = await form(suite.tenant.live, [
      ['from', 'app@sender.example'],
      ['to', uniqueAddress('later')],
      ['subject', 'later'],
      ['html', '<p>later</p>'],
      ['o:deliverytime', at.toUTCString()],
    ]);
    const t = await suite.gp.request('GET', `/v1/messages/${idOf(later.body.id)}`, { key: suite.tenant.live });
    expect(t.body).toMatchObject({ status: 'scheduled', send_at: at.toISOString() });

    const [a, b] = [uniqueAddress('idem-a'), uniqueAddress('idem-b')];
    const fields: [string, string][] = [
      ['from', 'app@sender.example'],
      ['to', `${a}, ${b}`],
      ['subject', 'once'],
      ['html', '<p>once</p>'],
    ];
    const headers = { 'idempotency-key': `mg-${a}` };
    const first = await form(suite.tenant.live, fields, headers);
    const again = await form(suite.tenant.live, fields, headers);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await receivedFor(a);
    await receivedFor(b);
    await laterMailArrived(suite);
    expect([delivered(a), delivered(b)]).toEqual([1, 1]);
  });

  it("refuses what it cannot honour in Mailgun's words: missing, repeated, unsupported, JSON", async () => {
    const base: [string, string][] = [
      ['from', 'app@sender.example'],
      ['subject', 's'],
    ];
    expect((await form(suite.tenant.live, [...base, ['html', '<p>h</p>']])).body).toEqual({
      message: "'to' parameter is missing",
    });
    expect((await form(suite.tenant.live, [...base, ['to', uniqueAddress('x')]])).body).toEqual({
      message: "Need at least one of 'text', 'html' or 'template' parameters specified",
    });
    const refused = await form(suite.tenant.live, [
      ...base,
      ['to', uniqueAddress('x')],
      ['html', '<p>h</p>'],
      ['subject', 'again'],
      ['o:dkim', 'yes'],
      ['o:tracking', 'maybe'],
    ]);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('gatepost-error-code')).toBe('invalid_request');
    expect(refused.body.message).toContain("'subject' parameter must be given once");
    expect(refused.body.message).toContain("'o:dkim' parameter is not supported by Gatepost");
    expect(refused.body.message).toContain("'o:tracking' parameter must be yes or no");
    const json = await suite.gp.request('POST', `/v3/${DOMAIN}/messages`, {
      body: { to: 'x@example.com' },
      headers: { authorization: `Basic ${Buffer.from(`api:${suite.tenant.live}`).toString('base64')}` },
    });
    expect(json.status).toBe(400);
    expect(json.body.message).toMatch(/multipart\/form-data/);
  });
});

describe('Style M: mailgun.js against POST /v3/:domain/messages.mime', () => {
  /** A MIME message as an application would build it; nodemailer-style CRLF lines. */
  const mime = (to: string, more = '', body = 'Content-Type: text/plain; charset=utf-8\r\n\r\nHello from MIME.\r\n') =>
    [
      'From: "Sender, Inc." <news@sender.example>',
      `To: Team <${to}>`,
      'Reply-To: help@sender.example',
      'Subject: Raw hello',
      'Message-ID: <raw-1@sender.example>',
      'X-Campaign: raw',
      'MIME-Version: 1.0',
      more,
    ]
      .filter(Boolean)
      .join('\r\n') +
    '\r\n' +
    body;

  it('sends the MIME message to each `to`, its headers shown as written, with the tags and custom data', async () => {
    const [a, b] = [uniqueAddress('mime-a'), uniqueAddress('mime-b')];
    const shownTo = uniqueAddress('mime-list');
    // A Buffer goes as a file part, as mailgun.js sends one.
    const result = await send(suite.tenant.live, {
      to: [a, b],
      message: Buffer.from(mime(shownTo)),
      'o:tag': 'raw',
      'v:order': '4711',
    });
    expect(result).toMatchObject({ status: 200, message: 'Queued. Thank you.' });

    const [ma, mb] = [await receivedFor(a), await receivedFor(b)];
    for (const m of [ma, mb]) {
      expect(m.parsed.from?.value[0]).toEqual({ name: 'Sender, Inc.', address: 'news@sender.example' });
      // The To header is the message's own; the recipients are the `to` parameters.
      expect(m.parsed.to).toMatchObject({ value: [{ name: 'Team', address: shownTo }] });
      expect(m.parsed.subject).toBe('Raw hello');
      expect(m.parsed.text?.trim()).toBe('Hello from MIME.');
      expect(m.parsed.html).toContain('Hello from MIME.');
      expect(m.parsed.replyTo?.value[0]?.address).toBe('help@sender.example');
      expect(m.parsed.headers.get('x-campaign')).toBe('raw');
      expect(JSON.parse(libmime.decodeWords(String(m.parsed.headers.get('x-mailgun-variables'))))).toEqual({ order: '4711' });
    }
    expect(ma.to).toEqual([a]);
    await laterMailArrived(suite);
    expect(delivered(shownTo)).toBe(0);
    const t = await sent(idOf(result.id!));
    expect(t.to).toBe(a);
    expect(t.tags).toEqual(['raw']);
    expect(t.events[0].data).toMatchObject({ ingress: 'style_m' });
  });

  it('takes the message as a string value too, and captures it with o:testmode', async () => {
    const to = uniqueAddress('mime-test');
    const result = await send(suite.tenant.live, { to, message: mime(to), 'o:testmode': 'yes' });
    expect(result.status).toBe(200);
    const capture = await captured(suite.tenant.live, to);
    expect(capture.subject).toBe('Raw hello');
    expect(capture.text?.trim()).toBe('Hello from MIME.');
    await laterMailArrived(suite);
    expect(delivered(to)).toBe(0);
  });

  it('refuses a MIME message with an attachment, and one with no message, sending nothing', async () => {
    const to = uniqueAddress('mime-attach');
    const boundary = 'b1';
    const withFile = mime(
      to,
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      [
        '',
        `--${boundary}`,
        'Content-Type: text/plain',
        '',
        'See attached.',
        `--${boundary}`,
        'Content-Type: text/plain; name="a.txt"',
        'Content-Disposition: attachment; filename="a.txt"',
        '',
        'attached',
        `--${boundary}--`,
        '',
      ].join('\r\n'),
    );
    const error = await refusal(send(suite.tenant.live, { to, message: Buffer.from(withFile) }));
    expect(error).toMatchObject({ status: 400, details: 'Attachments are not supported; the message was not sent.' });

    const missing = await suite.gp.request('POST', `/v3/${DOMAIN}/messages.mime`, {
      body: new URLSearchParams([['to', to]]).toString(),
      headers: {
        authorization: `Basic ${Buffer.from(`api:${suite.tenant.live}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    expect(missing.status).toBe(400);
    expect((missing.body as { message: string }).message).toBe("'message' parameter is missing");
    await laterMailArrived(suite);
    expect(delivered(to)).toBe(0);
  });
});
