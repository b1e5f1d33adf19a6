// Style S: the official @sendgrid/mail client, pointed at a started Gatepost, sends as it would
// to SendGrid; the mail arrives at the relay, the timeline shows it, and every refusal comes
// back as a ResponseError with SendGrid's error list.
import { Client } from '@sendgrid/client';
import { MailService, type MailDataRequired, type ResponseError } from '@sendgrid/mail';
import { describe, expect, it, vi } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { observe, refusalOf, uniqueAddress } from '../harness/compat.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

/** @sendgrid/mail as a user points it at Gatepost: a client with the key and Gatepost's base URL. */
function sendgrid(key: string): MailService {
  const client = new Client();
  // The client warns that a key not starting "SG." may not be SendGrid's: it is Gatepost's.
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  client.setApiKey(key);
  warn.mockRestore();
  client.setDefaultRequest('baseUrl', suite.gp.url);
  const mail = new MailService();
  mail.setClient(client);
  return mail;
}

const { receivedFor, delivered, sent, captured, allCaptured } = observe(suite);
const refusal = (send: Promise<unknown>) => refusalOf<ResponseError>(send);

describe('Style S: @sendgrid/mail against POST /v3/mail/send', () => {
  it('sends: 202, an empty body, X-Message-Id, and the mail at the relay as written', async () => {
    const to = uniqueAddress('ann');
    const cc = uniqueAddress('cc');
    const [response, body] = await sendgrid(suite.tenant.live).send({
      from: { email: 'news@sender.example', name: 'Sender, Inc.' },
      to: { email: to, name: 'Ann Reader' },
      cc,
      replyTo: 'help@sender.example',
      subject: 'Hello {{name}}',
      text: 'Hi {{name}}, plain.',
      html: '<p>Hi <b>{{name}}</b></p>',
      substitutions: { name: 'Ann' },
      categories: ['welcome', 'onboarding'],
      customArgs: { order: '4711' },
      headers: { 'X-Campaign': 'spring' },
    });
    expect(response.statusCode).toBe(202);
    expect(body).toBe('');
    const id = response.headers['x-message-id'];
    expect(id).toMatch(/^msg_[0-9a-z]{26}$/);
    expect(response.headers['gatepost-message-ids']).toBe(id);

    const mail = await receivedFor(to);
    expect(mail.to).toEqual(expect.arrayContaining([to, cc]));
    expect(mail.parsed.subject).toBe('Hello Ann');
    expect(mail.parsed.html).toContain('<p>Hi <b>Ann</b></p>');
    expect(mail.parsed.text?.trim()).toBe('Hi Ann, plain.');
    expect(mail.parsed.from?.value[0]).toEqual({ name: 'Sender, Inc.', address: 'news@sender.example' });
    expect(mail.parsed.to).toMatchObject({ value: [{ name: 'Ann Reader', address: to }] });
    expect(mail.parsed.replyTo?.value[0]?.address).toBe('help@sender.example');
    expect(mail.parsed.headers.get('x-campaign')).toBe('spring');
    expect(mail.messageId).toBe(`<${id}@sender.example>`);

    const t = await sent(id);
    expect(t.tags).toEqual(['welcome', 'onboarding', 'order:4711']);
    expect(t.events.map((e: { type: string }) => e.type)).toEqual(['message.accepted', 'message.queued', 'email.sent']);
    expect(t.events[0].data).toMatchObject({ ingress: 'style_s', sandbox: false });
  });

  it('fans each personalization out, one message per to address, each with its cc; subjects by precedence', async () => {
    const [a, b, c, copy] = [uniqueAddress('fan-a'), uniqueAddress('fan-b'), uniqueAddress('fan-c'), uniqueAddress('fan-cc')];
    const [response] = await sendgrid(suite.tenant.live).send({
      from: 'app@sender.example',
      subject: 'Top {{n}}',
      html: '<p>n={{n}}</p>',
      personalizations: [
        { to: [a, b], cc: copy, substitutions: { n: '1' } },
        { to: c, subject: 'Own {{n}}', substitutions: { n: '2' } },
      ],
    } as MailDataRequired);
    expect(response.statusCode).toBe(202);
    const ids = String(response.headers['gatepost-message-ids']).split(', ');
    expect(ids).toHaveLength(3);
    expect(response.headers['x-message-id']).toBe(ids[0]);

    const [ma, mb, mc] = [await receivedFor(a), await receivedFor(b), await receivedFor(c)];
    // Each sees only its own address in To; the personalization's cc is on both of its messages.
    expect(ma.parsed.to).toMatchObject({ value: [{ address: a }] });
    expect(mb.parsed.to).toMatchObject({ value: [{ address: b }] });
    expect(ma.parsed.cc).toMatchObject({ value: [{ address: copy }] });
    expect(mb.parsed.cc).toMatchObject({ value: [{ address: copy }] });
    expect(mc.parsed.cc).toBeUndefined();
    expect([ma.parsed.subject, mb.parsed.subject, mc.parsed.subject]).toEqual(['Top 1', 'Top 1', 'Own 2']);
    expect(mc.parsed.html).toContain('n=2');
    await eventually(() => delivered(copy) === 2);
    for (const id of ids) expect((await sent(id)).events[0].data.ingress).toBe('style_s');
  });

  it("takes SendGrid's limit of 1000 recipients in one request, and refuses 1001", async () => {
    const to = (n: number) => Array.from({ length: n }, (_, i) => `many${i}@example.com`);
    const mail = { from: 'app@sender.example', subject: 'many', html: '<p>many</p>' };
    const [response] = await sendgrid(suite.tenant.sandbox).sendMultiple({ ...mail, to: to(1000) });
    expect(response.statusCode).toBe(202);
    expect(response.headers['x-message-id']).toMatch(/^msg_/);
    // A thousand ids would pass the 16 KB that HTTP clients allow for headers: not listed.
    expect(response.headers['gatepost-message-ids']).toBeUndefined();
    await allCaptured(suite.tenant.sandbox, to(1000));
    const tooMany = await refusal(sendgrid(suite.tenant.sandbox).sendMultiple({ ...mail, to: to(1001) }));
    expect(tooMany.code).toBe(400);
    expect(tooMany.response.body).toMatchObject({ errors: [{ field: 'personalizations' }] });
  });

  it('refuses the whole request when one recipient is suppressed, naming it: nothing is sent', async () => {
    const [a, gone, c] = [uniqueAddress('all-a'), uniqueAddress('gone'), uniqueAddress('all-c')];
    await suite.gp.request('POST', '/v1/suppressions', { key: suite.tenant.live, body: { address: gone } });
    const error = await refusal(
      sendgrid(suite.tenant.live).send({ from: 'app@sender.example', to: [a, gone, c], subject: 's', html: '<p>h</p>' }),
    );
    expect(error.code).toBe(400);
    expect(error.response.headers['gatepost-error-code']).toBe('recipient_suppressed');
    expect(error.response.body).toEqual({
      errors: [{ message: expect.stringContaining(gone), field: 'personalizations.0.to.1.email', help: null }],
    });
    await laterMailArrived(suite);
    expect(delivered(a) + delivered(gone) + delivered(c)).toBe(0);
  });

  it('validates the whole request: a bad address in the middle refuses all, field by field', async () => {
    const [a, c] = [uniqueAddress('v-a'), uniqueAddress('v-c')];
    const res = await suite.gp.request('POST', '/v3/mail/send', {
      key: suite.tenant.live,
      body: {
        from: { email: 'app@sender.example' },
        personalizations: [{ to: [{ email: a }] }, { to: [{ email: 'not-an-address' }, { email: c }] }],
        subject: 's',
        content: [{ type: 'text/html', value: '<p>h</p>' }],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      errors: [{ message: 'not a valid email address', field: 'personalizations.1.to.0.email', help: null }],
    });
    await laterMailArrived(suite);
    expect(delivered(a) + delivered(c)).toBe(0);

    const bad = await suite.gp.request('POST', '/v3/mail/send', {
      key: suite.tenant.live,
      body: {
        personalizations: [{ to: [{ email: a }], cc: [{ email: a }] }],
        content: [{ type: 'text/calendar', value: 'x' }],
        tracking_settings: { ganalytics: { enable: true }, open_tracking: { enable: false } },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('gatepost-error-code')).toBe('invalid_request');
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'content.0.type',
      'personalizations.0',
      'tracking_settings.ganalytics.enable',
    ]);
    const unsupported = await suite.gp.request('POST', '/v3/mail/send', {
      key: suite.tenant.live,
      body: { asm: { group_id: 1 } },
    });
    expect(unsupported.body.errors).toEqual([
      { message: expect.any(String), field: 'personalizations', help: null },
      { message: 'Gatepost does not support this field.', field: 'asm', help: null },
    ]);
  });

  it('refuses an attachment in its own error format, never sending without it', async () => {
    const to = uniqueAddress('attach');
    const error = await refusal(
      sendgrid(suite.tenant.live).send({
        from: 'app@sender.example',
        to,
        subject: 's',
        html: '<p>h</p>',
        attachments: [{ content: 'aGVsbG8=', filename: 'hello.txt', type: 'text/plain' }],
      }),
    );
    expect(error.code).toBe(400);
    expect(error.response.body).toEqual({
      errors: [{ message: 'Attachments are not supported; the message was not sent.', field: 'attachments', help: null }],
    });
    await laterMailArrived(suite);
    expect(delivered(to)).toBe(0);
  });

  it('answers a bad, missing or public key as SendGrid does', async () => {
    const mail = { from: 'app@sender.example', to: uniqueAddress('auth'), subject: 's', html: '<p>h</p>' };
    const bad = await refusal(sendgrid('gp_live_not-a-key').send(mail));
    expect(bad.code).toBe(401);
    expect(bad.response.body).toEqual({
      errors: [{ message: 'The provided authorization grant is invalid, expired, or revoked', field: null, help: null }],
    });
    const missing = await suite.gp.request('POST', '/v3/mail/send', { body: {} });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ errors: [{ message: 'authorization required', field: null, help: null }] });
    const publicKey = await refusal(sendgrid(suite.tenant.publicKey).send(mail));
    expect(publicKey.code).toBe(403);
    expect(publicKey.response.headers['gatepost-error-code']).toBe('key_not_allowed');
  });

  it('captures sandbox sends (a sandbox key, or sandbox_mode with a live key): nothing reaches the relay', async () => {
    const [viaKey, viaMode] = [uniqueAddress('sandbox-key'), uniqueAddress('sandbox-mode')];
    const [byKey] = await sendgrid(suite.tenant.sandbox).send({
      from: 'app@sender.example',
      to: viaKey,
      subject: 'Sandboxed {{n}}',
      html: '<p>{{n}}</p>',
      substitutions: { n: '1' },
    });
    expect(byKey.statusCode).toBe(202);
    const [byMode] = await sendgrid(suite.tenant.live).send({
      from: 'app@sender.example',
      to: viaMode,
      subject: 'Sandboxed {{n}}',
      html: '<p>{{n}}</p>',
      substitutions: { n: '2' },
      mailSettings: { sandboxMode: { enable: true } },
    });
    // SendGrid answers sandbox mode with 200: validated, not sent.
    expect(byMode.statusCode).toBe(200);
    expect((await captured(suite.tenant.sandbox, viaKey)).subject).toBe('Sandboxed 1');
    expect((await captured(suite.tenant.live, viaMode)).subject).toBe('Sandboxed 2');
    const t = await suite.gp.request('GET', `/v1/messages/${byMode.headers['x-message-id']}`, { key: suite.tenant.live });
    expect(t.body.sandbox).toBe(true);
    await laterMailArrived(suite);
    expect(delivered(viaKey) + delivered(viaMode)).toBe(0);
  });

  it('renders a Gatepost template named by template_id, with dynamic_template_data', async () => {
    const slug = 'd-4f8a9c1e2b3d4e5f';
    const created = await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug, subject: 'Order {{order.id}} shipped', html: '<p>Hi {{name}}, {{order.items}} items</p>' },
    });
    expect(created.status).toBe(201);
    const to = uniqueAddress('tpl');
    const [response] = await sendgrid(suite.tenant.live).send({
      from: 'shop@sender.example',
      to,
      templateId: slug,
      dynamicTemplateData: { name: 'Ann & Bob', order: { id: 'A-17', items: 3 } },
      hideWarnings: true,
    });
    expect(response.statusCode).toBe(202);
    const mail = await receivedFor(to);
    expect(mail.parsed.subject).toBe('Order A-17 shipped');
    expect(mail.parsed.html).toContain('<p>Hi Ann &amp; Bob, 3 items</p>');

    const unknown = await refusal(sendgrid(suite.tenant.live).send({ from: 'shop@sender.example', to, templateId: 'd-nope' }));
    expect(unknown.code).toBe(400);
    expect(unknown.response.body).toMatchObject({ errors: [{ field: 'template_id' }] });
  });

  it('schedules with send_at, and a retry with the same Idempotency-Key sends nothing twice', async () => {
    const to = uniqueAddress('later');
    const sendAt = Math.floor(Date.now() / 1000) + 3600;
    const [scheduled] = await sendgrid(suite.tenant.live).send({
      from: 'app@sender.example',
      to,
      subject: 'later',
      html: '<p>later</p>',
      sendAt,
    });
    const t = await suite.gp.request('GET', `/v1/messages/${scheduled.headers['x-message-id']}`, { key: suite.tenant.live });
    expect(t.body).toMatchObject({ status: 'scheduled', send_at: new Date(sendAt * 1000).toISOString() });

    const [a, b] = [uniqueAddress('idem-a'), uniqueAddress('idem-b')];
    const body = {
      from: { email: 'app@sender.example' },
      personalizations: [{ to: [{ email: a }, { email: b }] }],
      subject: 'once',
      content: [{ type: 'text/html', value: '<p>once</p>' }],
    };
    const headers = { 'idempotency-key': `sg-${a}` };
    const first = await suite.gp.request('POST', '/v3/mail/send', { key: suite.tenant.live, body, headers });
    const again = await suite.gp.request('POST', '/v3/mail/send', { key: suite.tenant.live, body, headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get('gatepost-message-ids')).toBe(first.headers.get('gatepost-message-ids'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await receivedFor(a);
    await receivedFor(b);
    await laterMailArrived(suite);
    expect([delivered(a), delivered(b)]).toEqual([1, 1]);

    const other = await suite.gp.request('POST', '/v3/mail/send', {
      key: suite.tenant.live,
      body: { ...body, subject: 'different' },
      headers,
    });
    expect(other.status).toBe(400);
    expect(other.headers.get('gatepost-error-code')).toBe('idempotency_key_reused');
  });
});
