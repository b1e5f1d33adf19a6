// Sending through POST /v1/emails to a real SMTP relay: the mail that arrives, the timeline,
// scheduling, and a 400 naming each bad field.
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const receivedFor = (to: string) => eventually(() => suite.relay.received.find((r) => r.to.includes(to)));

describe('POST /v1/emails', () => {
  it('answers 202 and delivers a multipart/alternative mail with correct headers', async () => {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: {
        from: 'Zoë Ünïcode <zoe@sender.example>',
        to: 'Ann Reader <ann@example.com>',
        subject: 'Grüße, {{name}} — ✓',
        html: '<h1>Hello {{name}}</h1><p>Your code is <b>{{code}}</b>.</p>',
        data: { name: 'Ann', code: 4711 },
        tags: ['welcome'],
      },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', to: 'ann@example.com', sandbox: false, send_at: null });
    expect(res.body.id).toMatch(/^msg_[0-9a-z]{26}$/);

    const mail = await receivedFor('ann@example.com');
    expect(mail.parsed.subject).toBe('Grüße, Ann — ✓');
    // Non-ASCII subject and display name are MIME encoded-words on the wire (RFC 2047).
    expect(mail.raw).toMatch(/^Subject: =\?UTF-8\?[BQ]\?/im);
    expect(mail.raw).toMatch(/^From: =\?UTF-8\?[BQ]\?.*<zoe@sender\.example>/im);
    expect(mail.parsed.from?.value[0]).toEqual({ name: 'Zoë Ünïcode', address: 'zoe@sender.example' });
    expect(mail.raw).toMatch(/^Content-Type: multipart\/alternative/im);
    expect(mail.parsed.html).toContain('<h1>Hello Ann</h1>');
    // The plain-text part is generated from the html when none is given.
    expect(mail.parsed.text).toContain('HELLO ANN');
    expect(mail.parsed.text).toContain('Your code is 4711.');
    expect(mail.messageId).toBe(`<${res.body.id}@sender.example>`);
    expect(mail.parsed.date).toBeInstanceOf(Date);
    expect(mail.raw).toMatch(/^MIME-Version: 1\.0/im);
  });

  it('keeps the text the sender gives, and the default sender when from is absent', async () => {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: { to: 'text@example.com', subject: 'Plain', html: '<p>html part</p>', text: 'the text part, as given' },
    });
    expect(res.status).toBe(202);
    const mail = await receivedFor('text@example.com');
    expect(mail.parsed.text?.trim()).toBe('the text part, as given');
  });

  it('shows the full event history on the timeline, for the owning tenant only', async () => {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: { from: 'a@sender.example', to: 'timeline@example.com', subject: 'T', html: '<p>t</p>' },
    });
    const id = res.body.id as string;
    const timeline = await eventually(async () => {
      const t = await suite.gp.request('GET', `/v1/messages/${id}`, { key: suite.tenant.live });
      return t.body.status === 'sent' ? t : undefined;
    });
    expect(timeline.status).toBe(200);
    expect(timeline.body.events.map((e: { type: string }) => e.type)).toEqual([
      'message.accepted',
      'message.queued',
      'email.sent',
    ]);
    for (const e of timeline.body.events) {
      expect(e.id).toMatch(/^evt_/);
      expect(new Date(e.created_at).toISOString()).toBe(e.created_at);
      expect(e.data.message_id).toBe(id);
    }
    expect(timeline.body.events[2].data).toMatchObject({ smtp_code: 250, attempt: 1 });

    const other = await suite.gp.tenant();
    const foreign = await suite.gp.request('GET', `/v1/messages/${id}`, { key: other.live });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    expect(
      (await suite.gp.request('GET', '/v1/messages/msg_00000000000000000000000000', { key: suite.tenant.live })).status,
    ).toBe(404);
  });

  it('schedules a send_at in the future and fires it on time', async () => {
    const sendAt = new Date(Date.now() + 2500).toISOString();
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: { from: 'a@sender.example', to: 'later@example.com', subject: 'Later', html: '<p>later</p>', send_at: sendAt },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'scheduled', send_at: sendAt });
    const before = await suite.gp.request('GET', `/v1/messages/${res.body.id}`, { key: suite.tenant.live });
    expect(before.body.status).toBe('scheduled');
    expect(suite.relay.received.some((r) => r.to.includes('later@example.com'))).toBe(false);

    await receivedFor('later@example.com');
    const arrived = Date.now();
    expect(arrived).toBeGreaterThanOrEqual(Date.parse(sendAt));
    // The relay has the mail a moment before its 250 is recorded on the timeline: wait for it.
    const after = await eventually(async () => {
      const m = await suite.gp.request('GET', `/v1/messages/${res.body.id}`, { key: suite.tenant.live });
      return m.body.status === 'sent' ? m : undefined;
    });
    expect(after.body.events.map((e: { type: string }) => e.type)).toEqual([
      'message.accepted',
      'message.scheduled',
      'message.queued',
      'email.sent',
    ]);
    // How late it fires is a benchmark figure (bench:scheduled), never a test threshold.
  });

  it('refuses send_at in the past or more than 30 days ahead', async () => {
    for (const sendAt of [new Date(Date.now() - 60_000).toISOString(), new Date(Date.now() + 31 * 86_400_000).toISOString()]) {
      const res = await suite.gp.request('POST', '/v1/emails', {
        key: suite.tenant.live,
        body: { to: 'x@example.com', subject: 's', html: '<p>h</p>', send_at: sendAt },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'send_at' })]);
    }
  });

  it('names each bad field in a 400', async () => {
    const cases: [unknown, string[]][] = [
      [{ subject: 's', html: 'h' }, ['to']],
      [{ to: 'x@example.com', html: 'h' }, ['subject']],
      [{ to: 'x@example.com', subject: 's' }, ['html']],
      [{ to: 'not-an-address', subject: 's', html: 'h' }, ['to']],
      [{ to: 'x@example.com', from: 'nope', subject: 's', html: 'h' }, ['from']],
      [{ to: 'x@example.com', reply_to: 'a@', subject: 's', html: 'h' }, ['reply_to']],
      [{ to: 'x@example.com\r\nBcc: evil@example.com', subject: 's', html: 'h' }, ['to']],
      [{ to: 'x@example.com', subject: 'a\r\nBcc: evil@example.com', html: 'h' }, ['subject']],
      [{ to: 'x@example.com', subject: 's', html: 'h', headers: { 'X-Ok': 'a\r\nBcc: evil@example.com' } }, ['headers.X-Ok']],
      [{ to: 'x@example.com', subject: 's', html: 'h', headers: { 'Bad Name': 'v' } }, ['headers.Bad Name']],
      [{ to: 'x@example.com', subject: 's', html: 'h', headers: { From: 'v' } }, ['headers.From']],
      [{ to: 123, subject: 's', html: 'h' }, ['to']],
      [{ to: 'x@example.com', subject: 's', html: 'h', data: 'x' }, ['data']],
      [{ to: 'x@example.com', subject: 's', html: 'h', send_at: 'tomorrow' }, ['send_at']],
      [{ to: 'x@example.com', subject: 's', html: 'h', stream: 'bulk' }, ['stream']],
      [{ to: 'x@example.com', subject: 's', html: 'h', tags: ['has space'] }, ['tags.0']],
      [{ to: 'x@example.com', subject: 's', html: 'h', idempotency_key: '' }, ['idempotency_key']],
      [{ to: 'x@example.com', subject: 's', html: 'h', surprise: true }, ['surprise']],
      [{ to: 'x@example.com', subject: 's', html: '{{#if x}}unclosed' }, ['html']],
    ];
    for (const [body, fields] of cases) {
      const res = await suite.gp.request('POST', '/v1/emails', { key: suite.tenant.live, body });
      expect(res.status, JSON.stringify(body)).toBe(res.body.error.code === 'template_render_failed' ? 422 : 400);
      expect(
        res.body.error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toEqual(fields);
      expect(res.body.error.message).toBeTruthy();
    }
    const notJson = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: '{"to":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_request');
    const wrongType = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: 'to=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toMatch(/application\/json/);
  });

  it('refuses a message over 1 MiB with 413', async () => {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: { to: 'big@example.com', subject: 'big', html: `<p>${'x'.repeat(1024 * 1024)}</p>` },
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('message_too_large');
  });
});
