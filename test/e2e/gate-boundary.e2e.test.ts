// Every ingress's refusal reaches its client through the gate. A suppressed recipient is known
// only to its RecipientActor, which only the gate asks; the gate's refusal names the
// suppression's reason ("manual") in its own sentence, and each ingress carries it in its own
// wire format. The same request to another address is accepted, so the refusal is that
// recipient's. Which folder may import what (so that no ingress reaches an actor but through the
// gate) is checked by .dependency-cruiser.cjs.
import { Errors } from 'postmark';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniqueAddress } from '../harness/compat.harness.ts';
import { stylePClient } from '../harness/style-p.harness.ts';
import { dialog } from '../harness/submission.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();
let tenant: Awaited<ReturnType<typeof suite.gp.tenant>>;
const gone = uniqueAddress('gone');
const gateSentence = `${gone} is suppressed (manual); the message was not sent.`;

beforeAll(async () => {
  tenant = await suite.gp.tenant();
  expect((await suite.gp.request('POST', '/v1/suppressions', { key: tenant.live, body: { address: gone } })).status).toBe(201);
});

const send = (path: string, body: unknown) => suite.gp.request('POST', path, { key: tenant.sandbox, body });

const mailgunForm = (to: string) =>
  suite.gp.request('POST', '/v3/mg.example.com/messages', {
    body: new URLSearchParams({ from: 'app@sender.example', to, subject: 'S', html: '<p>h</p>' }).toString(),
    headers: {
      authorization: `Basic ${Buffer.from(`api:${tenant.sandbox}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
  });

/** A browser send names no recipient: the stored template does. */
async function browserSend(to: string) {
  const slug = `boundary-${to.split('@')[0]}`;
  expect(
    (await suite.gp.request('POST', '/v1/templates', { key: tenant.live, body: { slug, subject: 'S', html: '<p>h</p>', to } }))
      .status,
  ).toBe(201);
  return suite.gp.request('POST', '/api/v1.0/email/send', {
    body: { user_id: tenant.publicKey, service_id: 'default_service', template_id: slug },
  });
}

/** SMTP: RCPT TO reads the suppression list itself, so the address is suppressed after it; DATA's answer is the gate's. */
async function smtpSend(to: string, suppressBeforeData: boolean): Promise<string> {
  const d = await dialog(suite.gp.smtpPort);
  try {
    await d.say('EHLO client.test');
    expect(await d.say(`AUTH PLAIN ${Buffer.from(`\0app\0${tenant.sandbox}`).toString('base64')}`)).toMatch(/^235 /);
    expect(await d.say('MAIL FROM:<app@sender.example>')).toMatch(/^250 /);
    expect(await d.say(`RCPT TO:<${to}>`)).toMatch(/^250 /);
    if (suppressBeforeData) {
      expect((await suite.gp.request('POST', '/v1/suppressions', { key: tenant.live, body: { address: to } })).status).toBe(201);
    }
    expect(await d.say('DATA')).toMatch(/^354 /);
    d.send(`From: app@sender.example\r\nTo: ${to}\r\nSubject: S\r\n\r\nhello`);
    return await d.say('.');
  } finally {
    d.close();
  }
}

describe('every ingress refuses through the gate, in its own format', () => {
  it('POST /v1/emails: 422 recipient_suppressed', async () => {
    expect((await send('/v1/emails', { to: uniqueAddress('ok'), subject: 'S', html: '<p>h</p>' })).status).toBe(202);
    const refused = await send('/v1/emails', { to: gone, subject: 'S', html: '<p>h</p>' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'recipient_suppressed', message: gateSentence });
  });

  it('POST /v1/emails/batch: the item refused, the other admitted', async () => {
    const res = await send('/v1/emails/batch', [
      { to: uniqueAddress('ok'), subject: 'S', html: '<p>h</p>' },
      { to: gone, subject: 'S', html: '<p>h</p>' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 1, refused: 1 });
    expect(res.body.results[1].error).toMatchObject({ code: 'recipient_suppressed', message: gateSentence });
  });

  it("Style P (Postmark's client): ErrorCode 406 naming the inactive address", async () => {
    const client = stylePClient(suite.gp, tenant.sandbox);
    const message = { From: 'app@sender.example', Subject: 'S', HtmlBody: '<p>h</p>' };
    expect(await client.sendEmail({ ...message, To: uniqueAddress('ok') })).toMatchObject({ ErrorCode: 0 });
    const error = await client.sendEmail({ ...message, To: gone }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Errors.PostmarkError);
    expect(error).toMatchObject({ code: 406, statusCode: 422 });
    expect((error as Errors.PostmarkError).message).toContain(`Found inactive addresses: ${gone}.`);
  });

  it("Style S: SendGrid's error list, the gate's code in a header", async () => {
    const body = (to: string) => ({
      personalizations: [{ to: [{ email: to }] }],
      from: { email: 'app@sender.example' },
      subject: 'S',
      content: [{ type: 'text/html', value: '<p>h</p>' }],
    });
    expect((await send('/v3/mail/send', body(uniqueAddress('ok')))).status).toBe(202);
    const refused = await send('/v3/mail/send', body(gone));
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ message: gateSentence, field: 'personalizations.0.to.0.email', help: null }]);
    expect(refused.headers.get('gatepost-error-code')).toBe('recipient_suppressed');
  });

  it("Style M: Mailgun's {message}, the gate's code in a header", async () => {
    expect((await mailgunForm(uniqueAddress('ok'))).status).toBe(200);
    const refused = await mailgunForm(gone);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ message: gateSentence });
    expect(refused.headers.get('gatepost-error-code')).toBe('recipient_suppressed');
  });

  it("browser SDK: EmailJS's plain-text answer", async () => {
    expect((await browserSend(uniqueAddress('ok'))).status).toBe(200);
    const refused = await browserSend(gone);
    expect(refused.status).toBe(422);
    expect(refused.body).toBe(gateSentence);
    expect(refused.headers.get('gatepost-error-code')).toBe('recipient_suppressed');
  });

  it('SMTP submission: the reply to DATA, 550 5.1.1', async () => {
    expect(await smtpSend(uniqueAddress('ok'), false)).toMatch(/^250 /);
    const late = uniqueAddress('late');
    expect(await smtpSend(late, true)).toBe(`550 5.1.1 ${late} is suppressed (manual); the message was not sent.`);
  });
});
