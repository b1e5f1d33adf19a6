// Style P (Postmark-compatible) driven by the official Postmark client, postmark.js, against a
// started Gatepost: what its callers get back, the mail that reaches the relay, the timeline.
import { Errors } from 'postmark';
import { describe, expect, it } from 'vitest';
import { observe, uniqueAddress as unique } from '../harness/compat.harness.ts';
import { eventually } from '../harness/gatepost.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';
import { stylePClient } from '../harness/style-p.harness.ts';

const suite = gatepostWithRelay();

const uniques = <T extends string[]>(...names: T) => names.map((name) => unique(name)) as { [K in keyof T]: string };
const { receivedFor, sent: timeline } = observe(suite);
const allFor = (to: string) => suite.relay.received.filter((r) => r.to.includes(to));
const client = (key = suite.tenant.live, opts = {}) => stylePClient(suite.gp, key, opts);

/** The error a rejected call raised. */
async function failure(call: Promise<unknown>): Promise<Errors.PostmarkError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Errors.PostmarkError);
  return error as Errors.PostmarkError;
}

describe('POST /email through the official client', () => {
  it('sends, answers ErrorCode 0 with a MessageID, and keeps every field', async () => {
    const to = unique('ann');
    const cc = unique('cc');
    const sent = await client().sendEmail({
      From: 'Shop <shop@sender.example>',
      To: `Ann Reader <${to}>`,
      Cc: cc,
      Subject: 'Your order',
      HtmlBody: '<p>Order <b>42</b> ships today. {{not a placeholder}}</p>',
      TextBody: 'Order 42 ships today.',
      ReplyTo: 'help@sender.example',
      Tag: 'orders',
      Metadata: { order: '42' },
      Headers: [{ Name: 'X-Order', Value: '42' }],
      MessageStream: 'outbound',
      TrackOpens: true,
    });
    expect(sent).toMatchObject({ ErrorCode: 0, Message: 'OK', To: `Ann Reader <${to}>` });
    expect(sent.MessageID).toMatch(/^msg_[0-9a-z]{26}$/);
    expect(Date.parse(sent.SubmittedAt)).not.toBeNaN();

    const mail = await receivedFor(to);
    expect(mail.to.sort()).toEqual([to, cc].sort());
    expect(mail.messageId).toBe(`<${sent.MessageID}@sender.example>`);
    expect(mail.parsed.subject).toBe('Your order');
    // Sent as written: Postmark's /email fills no placeholders, and neither does Gatepost here.
    expect(mail.parsed.html).toContain('<p>Order <b>42</b> ships today. {{not a placeholder}}</p>');
    expect(mail.parsed.text?.trim()).toBe('Order 42 ships today.');
    expect(mail.parsed.replyTo?.value[0]!.address).toBe('help@sender.example');
    expect(mail.parsed.cc && 'value' in mail.parsed.cc ? mail.parsed.cc.value[0]!.address : null).toBe(cc);
    expect(mail.parsed.headers.get('x-order')).toBe('42');
    expect(mail.parsed.headers.get('x-pm-metadata-order')).toBe('42');
    // TrackOpens is acted on (docs/tracking.md): the html carries the open pixel.
    expect(mail.parsed.html).toMatch(/<img src="[^"]*\/t\/o\/msg_[^"]+"/);

    const t = await timeline(sent.MessageID);
    expect(t).toMatchObject({ to: `"Ann Reader" <${to}>`, stream: 'transactional', tags: ['orders'], sandbox: false });
    expect(t.events[0]).toMatchObject({ type: 'message.accepted', data: { ingress: 'style_p' } });
    expect(t.events.map((e: { type: string }) => e.type)).toContain('email.sent');
  });

  it('makes one message per To address, each carrying the Cc and Bcc', async () => {
    const [a, b, cc, bcc] = uniques('a', 'b', 'cc', 'bcc');
    const sent = await client().sendEmail({
      From: 'shop@sender.example',
      To: `${a}, "Reader, B" <${b}>`,
      Cc: cc,
      Bcc: bcc,
      Subject: 'Fan-out',
      HtmlBody: '<p>fan</p>',
    });
    const recipients = (sent as unknown as { Recipients: { To: string; MessageID: string; ErrorCode: number }[] }).Recipients;
    expect(recipients.map((r) => [r.To, r.ErrorCode])).toEqual([
      [a, 0],
      [b, 0],
    ]);
    expect(sent.MessageID).toBe(recipients[0]!.MessageID);
    for (const { To, MessageID } of recipients) {
      const mail = await eventually(() => suite.relay.received.find((r) => r.messageId === `<${MessageID}@sender.example>`));
      expect(mail.to.sort()).toEqual([To, cc, bcc].sort());
      expect(mail.parsed.to && 'value' in mail.parsed.to ? mail.parsed.to.value.map((v) => v.address) : []).toEqual([To]);
      // Bcc is on the envelope only, never in the headers.
      expect(mail.raw).not.toContain(bcc);
    }
    expect((await timeline(recipients[1]!.MessageID)).to).toBe(`"Reader, B" <${b}>`);
  });

  it('sends a TextBody-only message with its text exactly and an HTML part showing it', async () => {
    const to = unique('text');
    await client().sendEmail({ From: 'shop@sender.example', To: to, Subject: 'Text', TextBody: 'Line 1\n  <Line 2> & more' });
    const mail = await receivedFor(to);
    expect(mail.parsed.text?.trim()).toBe('Line 1\n  <Line 2> & more');
    expect(mail.parsed.html).toContain('Line 1\n  &lt;Line 2&gt; &amp; more');
  });

  it('puts broadcast sends on the broadcast stream, and refuses stream ids it does not know', async () => {
    const to = unique('news');
    const sent = await client().sendEmail({
      From: 'shop@sender.example',
      To: to,
      Subject: 'News',
      HtmlBody: '<p>n</p>',
      MessageStream: 'broadcast',
    });
    expect((await timeline(sent.MessageID)).stream).toBe('broadcast');
    const refused = await failure(
      client().sendEmail({ From: 'shop@sender.example', To: to, Subject: 'x', HtmlBody: 'x', MessageStream: 'promotions' }),
    );
    expect(refused).toBeInstanceOf(Errors.InvalidEmailRequestError);
    expect(refused.message).toContain('MessageStream');
  });

  it('refuses a suppressed recipient with 406, and the client lists the inactive address', async () => {
    const to = unique('gone');
    expect((await suite.gp.request('POST', '/v1/suppressions', { key: suite.tenant.live, body: { address: to } })).status).toBe(
      201,
    );
    const other = unique('fine');
    const error = await failure(
      client().sendEmail({ From: 'shop@sender.example', To: `${other}, ${to}`, Subject: 'x', HtmlBody: '<p>x</p>' }),
    );
    expect(error).toBeInstanceOf(Errors.InactiveRecipientsError);
    expect(error).toMatchObject({ statusCode: 422, code: 406 });
    expect((error as Errors.InactiveRecipientsError).recipients).toEqual([to]);
    // One To refused refuses the whole send: no message to the other address either.
    await laterMailArrived(suite);
    expect(allFor(other)).toEqual([]);
    expect(allFor(to)).toEqual([]);
  });

  it('refuses attachments with 422 and ErrorCode 300, never sending without them', async () => {
    const to = unique('attach');
    const error = await failure(
      client().sendEmail({
        From: 'shop@sender.example',
        To: to,
        Subject: 'x',
        HtmlBody: '<p>x</p>',
        Attachments: [{ Name: 'a.txt', Content: 'aGVsbG8=', ContentType: 'text/plain', ContentID: null }],
      }),
    );
    expect(error).toBeInstanceOf(Errors.InvalidEmailRequestError);
    expect(error).toMatchObject({ statusCode: 422, code: 300 });
    expect(error.message).toMatch(/attachments/i);
    await laterMailArrived(suite);
    expect(allFor(to)).toEqual([]);
  });

  it('refuses a bad or public key with 401 and ErrorCode 10 (InvalidAPIKeyError)', async () => {
    const message = { From: 'shop@sender.example', To: unique('k'), Subject: 'x', HtmlBody: '<p>x</p>' };
    for (const key of ['gp_live_not-a-key', suite.tenant.publicKey]) {
      const error = await failure(client(key).sendEmail(message));
      expect(error).toBeInstanceOf(Errors.InvalidAPIKeyError);
      expect(error).toMatchObject({ statusCode: 401, code: 10 });
    }
    const error = await failure(client('gp_live_not-a-key').sendEmailBatch([message]));
    expect(error).toBeInstanceOf(Errors.InvalidAPIKeyError);
  });

  it('takes the key in X-Compat-Server-Token as well', async () => {
    const to = unique('neutral');
    const res = await suite.gp.request('POST', '/email', {
      headers: { 'x-compat-server-token': suite.tenant.live, accept: 'application/json' },
      body: { From: 'shop@sender.example', To: to, Subject: 'Neutral', HtmlBody: '<p>n</p>' },
    });
    expect(res.status).toBe(200);
    expect(res.body.ErrorCode).toBe(0);
    expect((await receivedFor(to)).parsed.subject).toBe('Neutral');
  });

  it('runs the full pipeline for a sandbox key and captures the message instead of sending it', async () => {
    const to = unique('sandbox');
    const sent = await client(suite.tenant.sandbox).sendEmail({
      From: 'shop@sender.example',
      To: to,
      Subject: 'Sandboxed',
      HtmlBody: '<p>s</p>',
    });
    expect(sent.ErrorCode).toBe(0);
    const t = await timeline(sent.MessageID, suite.tenant.sandbox);
    expect(t.sandbox).toBe(true);
    const inbox = await suite.gp.request('GET', '/v1/sandbox/messages', { key: suite.tenant.sandbox });
    expect(JSON.stringify(inbox.body)).toContain(sent.MessageID);
    expect(allFor(to)).toEqual([]);
  });

  it('makes a retry with the same Idempotency-Key a replay, and refuses the key with another body', async () => {
    const to = unique('idem');
    const key = `idem-${Math.random()}`;
    const replayed: (string | null)[] = [];
    const send = (subject: string) =>
      client(suite.tenant.live, {
        idempotencyKey: key,
        onResponse: (r: Response) => replayed.push(r.headers.get('idempotent-replayed')),
      }).sendEmail({ From: 'shop@sender.example', To: to, Subject: subject, HtmlBody: '<p>i</p>' });
    const first = await send('Once');
    const again = await send('Once');
    expect(again.MessageID).toBe(first.MessageID);
    expect(replayed).toEqual([null, 'true']);
    const error = await failure(send('Other'));
    expect(error).toMatchObject({ statusCode: 422, code: 300 });
    expect(error.message).toMatch(/idempotency key/i);
    // Another To under the same key is another request too, not a replay that sends the new part.
    const extra = unique('extra');
    const widened = await failure(
      client(suite.tenant.live, { idempotencyKey: key }).sendEmail({
        From: 'shop@sender.example',
        To: `${to}, ${extra}`,
        Subject: 'Once',
        HtmlBody: '<p>i</p>',
      }),
    );
    expect(widened).toMatchObject({ statusCode: 422, code: 300 });
    await receivedFor(to);
    await laterMailArrived(suite);
    expect(allFor(to)).toHaveLength(1);
    expect(allFor(extra)).toEqual([]);
    expect((await timeline(first.MessageID)).idempotency_key).toBe(`${key}:0`);
  });
});

describe('POST /email/batch through the official client', () => {
  it('answers 200 with one result per message; a bad message in the middle is its own result', async () => {
    const [ok1, gone, attach, bad, ok2] = uniques('ok1', 'gone', 'attach', 'bad', 'ok2');
    await suite.gp.request('POST', '/v1/suppressions', { key: suite.tenant.live, body: { address: gone } });
    const message = (to: string) => ({ From: 'shop@sender.example', To: to, Subject: `Batch ${to}`, HtmlBody: '<p>b</p>' });
    const results = await client().sendEmailBatch([
      message(ok1),
      message(gone),
      { ...message(attach), Attachments: [{ Name: 'a.txt', Content: 'aGk=', ContentType: 'text/plain', ContentID: null }] },
      { ...message(bad), To: 'not an address' },
      message(ok2),
    ]);
    expect(results.map((r) => r.ErrorCode)).toEqual([0, 406, 300, 300, 0]);
    expect(results[1]!.Message).toContain(`Found inactive addresses: ${gone}.`);
    expect(results[2]!.Message).toMatch(/attachments/i);
    expect(results[3]!.Message).toMatch(/^Invalid request: To/);
    for (const i of [0, 4]) {
      const mail = await receivedFor(results[i]!.To!);
      expect(mail.messageId).toBe(`<${results[i]!.MessageID}@sender.example>`);
    }
    await laterMailArrived(suite);
    for (const to of [gone, attach, bad]) expect(allFor(to)).toEqual([]);
  });

  it('gives each message of a retried batch its own key, so nothing is sent twice', async () => {
    const tos = uniques('r0', 'r1', 'r2');
    const key = `batch-${Math.random()}`;
    const batch = () =>
      client(suite.tenant.live, { idempotencyKey: key }).sendEmailBatch(
        tos.map((to) => ({ From: 'shop@sender.example', To: to, Subject: 'Retry', HtmlBody: '<p>r</p>' })),
      );
    const first = await batch();
    const again = await batch();
    expect(again.map((r) => r.MessageID)).toEqual(first.map((r) => r.MessageID));
    for (const to of tos) await receivedFor(to);
    await laterMailArrived(suite);
    for (const to of tos) expect(allFor(to)).toHaveLength(1);
    expect((await timeline(first[2]!.MessageID!)).idempotency_key).toBe(`${key}:2:0`);
  });

  it('refuses more than 500 messages with ErrorCode 410, sending none', async () => {
    const to = unique('many');
    const messages = Array.from({ length: 501 }, () => ({ From: 'shop@sender.example', To: to, Subject: 'x', HtmlBody: 'x' }));
    const error = await failure(client().sendEmailBatch(messages));
    expect(error).toMatchObject({ statusCode: 422, code: 410 });
    await laterMailArrived(suite);
    expect(allFor(to)).toEqual([]);
  });
});

describe('templates through the official client', () => {
  it('sends withTemplate by TemplateAlias or TemplateId, filling TemplateModel into the template of that slug', async () => {
    for (const slug of ['welcome-p', '4711']) {
      const created = await suite.gp.request('POST', '/v1/templates', {
        key: suite.tenant.live,
        body: { slug, subject: 'Welcome, {{name}}', html: '<p>Hi {{name}}, code {{code}}</p>', text: 'Hi {{name}}' },
      });
      expect(created.status).toBe(201);
    }
    const [byAlias, byId] = uniques('alias', 'id');
    const a = await client().sendEmailWithTemplate({
      From: 'shop@sender.example',
      To: byAlias,
      TemplateAlias: 'welcome-p',
      TemplateModel: { name: 'Ann <3', code: 7 },
      Tag: 'welcome',
    });
    await client().sendEmailWithTemplate({
      From: 'shop@sender.example',
      To: byId,
      TemplateId: 4711,
      TemplateModel: { name: 'Bob', code: 8 },
    });
    expect(a.ErrorCode).toBe(0);
    const mail = await receivedFor(byAlias);
    expect(mail.parsed.subject).toBe('Welcome, Ann <3');
    expect(mail.parsed.html).toContain('<p>Hi Ann &lt;3, code 7</p>');
    expect(mail.parsed.text?.trim()).toBe('Hi Ann <3');
    expect((await receivedFor(byId)).parsed.subject).toBe('Welcome, Bob');
    expect((await timeline(a.MessageID)).tags).toEqual(['welcome']);

    const error = await failure(
      client().sendEmailWithTemplate({ From: 'shop@sender.example', To: byId, TemplateAlias: 'nope', TemplateModel: {} }),
    );
    expect(error).toMatchObject({ statusCode: 422, code: 1101 });
  });

  it('sends batchWithTemplates, a missing template in the middle being its own result', async () => {
    await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug: 'receipt-p', subject: 'Receipt {{n}}', html: '<p>Receipt {{n}}</p>' },
    });
    const [t1, t2, t3] = uniques('t1', 't2', 't3');
    const results = await client().sendEmailBatchWithTemplates([
      { From: 'shop@sender.example', To: t1, TemplateAlias: 'receipt-p', TemplateModel: { n: 1 } },
      { From: 'shop@sender.example', To: t2, TemplateAlias: 'missing-p', TemplateModel: { n: 2 } },
      { From: 'shop@sender.example', To: t3, TemplateAlias: 'receipt-p', TemplateModel: { n: 3 } },
    ]);
    expect(results.map((r) => r.ErrorCode)).toEqual([0, 1101, 0]);
    expect((await receivedFor(t1)).parsed.subject).toBe('Receipt 1');
    expect((await receivedFor(t3)).parsed.subject).toBe('Receipt 3');
    await laterMailArrived(suite);
    expect(allFor(t2)).toEqual([]);
  });
});

describe('the wire format of refusals', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    suite.gp.request('POST', path, {
      body,
      headers: { 'x-postmark-server-token': suite.tenant.live, accept: 'application/json', ...headers },
    });

  it('answers JSON with an ErrorCode for bad JSON, a non-JSON body, an unknown field and an unknown route', async () => {
    const badJson = await post('/email', '{"From": ');
    expect(badJson.status).toBe(422);
    expect(badJson.body.ErrorCode).toBe(402);
    const notJson = await post('/email', 'From=a', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(notJson.status).toBe(415);
    expect(notJson.body.ErrorCode).toBe(409);
    const unknown = await post('/email', {
      From: 'a@sender.example',
      To: 'b@example.com',
      Subject: 's',
      HtmlBody: 'h',
      Colour: 'red',
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ ErrorCode: 300 });
    expect(unknown.body.Message).toContain('Colour');
    const route = await post('/email/bulk', {});
    expect(route.status).toBe(404);
    expect(route.body.Message).toContain('/email/bulk');
    const noBody = await post('/email', { From: 'a@sender.example', To: 'b@example.com', Subject: 's' });
    expect(noBody.body).toMatchObject({ ErrorCode: 300, Message: 'Invalid request: HtmlBody: give HtmlBody, TextBody or both.' });
  });
});
