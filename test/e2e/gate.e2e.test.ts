// The admission gate: every refusal through every ingress that exists. Each ingress is an
// adapter that sends one message and reports the error code it was refused with (or null);
// a new ingress adds one adapter here and inherits every check.
import { Errors } from 'postmark';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { errorCatalog } from '../../errors/errors.catalog.ts';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';
import { stylePClient } from '../harness/style-p.harness.ts';
import { submission } from '../harness/submission.harness.ts';

const suite = gatepostWithRelay();

interface Attempt {
  key: string;
  to: string;
  idempotencyKey?: string;
  subject?: string;
  attachment?: boolean;
}

interface Refusal {
  code: string;
  status: number;
  retryAfter: string | null;
}

interface Ingress {
  name: string;
  /** Sends one message; the refusal's code and HTTP status, or null when accepted. */
  send(a: Attempt): Promise<Refusal | null>;
  /** How this ingress refuses a send over the quota, besides the code. */
  overQuota: Omit<Refusal, 'code'>;
}

/** An HTTP ingress's quota refusal: 429, and a Retry-After of some seconds. */
const TOO_MANY = { status: 429, retryAfter: expect.stringMatching(/^[1-9]\d*$/) };

const nativeBody = (a: Attempt) => ({
  to: a.to,
  subject: a.subject ?? 'Gate',
  html: '<p>gate</p>',
  ...(a.idempotencyKey ? { idempotency_key: a.idempotencyKey } : {}),
  ...(a.attachment ? { attachments: [{ filename: 'a.txt', content: 'aGVsbG8=' }] } : {}),
});

/** Style P answers with Postmark's numeric codes; this names the refusal the way the gate does. */
function gateCodeOfStyleP({ code, message }: Errors.PostmarkError): string {
  if (code === 406) return 'recipient_suppressed';
  if (code === 429) return /quota/i.test(message) ? 'quota_exceeded' : 'rate_limited';
  if (code === 300 && /attachments/i.test(message)) return 'attachments_unsupported';
  if (code === 300 && /idempotency key/i.test(message)) return 'idempotency_key_reused';
  return `ErrorCode ${code}`;
}

/**
 * The catalogue code an SMTP reply stands for: the one whose reply code and enhanced status code
 * it carries, or, where codes share them (554 5.6.0), whose sentence it starts with.
 */
function catalogCodeOf(reply: string): string {
  const [, code, enhanced, text] = /^(\d{3}) (\d\.\d{1,3}\.\d{1,3}) (.*)$/s.exec(reply) ?? [];
  const matching = Object.entries(errorCatalog).filter(([, e]) => e.smtp[0] === Number(code) && e.smtp[1] === enhanced);
  const found = matching.length === 1 ? matching[0] : matching.find(([, e]) => text?.startsWith(e.message));
  return found?.[0] ?? `unmapped reply: ${reply}`;
}

const ingresses: Ingress[] = [
  {
    name: 'POST /v1/emails',
    overQuota: TOO_MANY,
    async send(a) {
      const res = await suite.gp.request('POST', '/v1/emails', { key: a.key, body: nativeBody(a) });
      if (res.status === 202) return null;
      return { code: res.body.error.code, status: res.status, retryAfter: res.headers.get('retry-after') };
    },
  },
  {
    name: 'POST /v1/emails/batch',
    // The batch is answered; the refusal is its item's.
    overQuota: { status: 200, retryAfter: null },
    async send(a) {
      const res = await suite.gp.request('POST', '/v1/emails/batch', { key: a.key, body: [nativeBody(a)] });
      expect(res.status).toBe(200);
      const item = res.body.results[0];
      return item.error ? { code: item.error.code, status: res.status, retryAfter: null } : null;
    },
  },
  {
    name: 'POST /email (Style P, the official Postmark client)',
    overQuota: TOO_MANY,
    async send(a) {
      let retryAfter: string | null = null;
      const client = stylePClient(suite.gp, a.key, {
        idempotencyKey: a.idempotencyKey,
        onResponse: (r) => (retryAfter = r.headers.get('retry-after')),
      });
      const attachments = [{ Name: 'a.txt', Content: 'aGVsbG8=', ContentType: 'text/plain', ContentID: null }];
      try {
        await client.sendEmail({
          From: 'gate@sender.example',
          To: a.to,
          Subject: a.subject ?? 'Gate',
          HtmlBody: '<p>gate</p>',
          ...(a.attachment ? { Attachments: attachments } : {}),
        });
        return null;
      } catch (error) {
        if (!(error instanceof Errors.PostmarkError)) throw error;
        return { code: gateCodeOfStyleP(error), status: error.statusCode, retryAfter };
      }
    },
  },
  {
    name: 'POST /api/v1.0/email/send and send-form (browser SDK)',
    overQuota: TOO_MANY,
    async send(a) {
      // From a browser the recipient is the stored template's: store one with this `to` first.
      const subject = a.subject ?? 'Gate';
      const slug = `gate-${createHash('sha256').update(`${a.to}\n${subject}`).digest('hex').slice(0, 16)}`;
      const body = { slug, subject, html: '<p>gate</p>', to: a.to };
      // Templates are managed with the tenant's live key: a sandbox key only sends and reads.
      const made = await suite.gp.request('POST', '/v1/templates', { key: suite.gp.liveKeyOf.get(a.key) ?? a.key, body });
      expect([201, 409]).toContain(made.status);
      // A page never holds a live key: a live send from a browser uses the tenant's public key.
      const fields = { user_id: suite.gp.publicKeyOf.get(a.key) ?? a.key, service_id: 'default_service', template_id: slug };
      const headers = a.idempotencyKey ? { 'idempotency-key': a.idempotencyKey } : undefined;
      let res: Response;
      if (a.attachment) {
        const form = new FormData();
        for (const [name, value] of Object.entries(fields)) form.append(name, value);
        form.append('upload', new Blob(['hello']), 'a.txt');
        res = await fetch(`${suite.gp.url}/api/v1.0/email/send-form`, { method: 'POST', headers, body: form });
      } else {
        res = await fetch(`${suite.gp.url}/api/v1.0/email/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(fields),
        });
      }
      if (res.status === 200) return null;
      return { code: res.headers.get('gatepost-error-code')!, status: res.status, retryAfter: res.headers.get('retry-after') };
    },
  },
  {
    name: 'POST /v3/mail/send (Style S)',
    overQuota: TOO_MANY,
    async send(a) {
      const res = await suite.gp.request('POST', '/v3/mail/send', {
        key: a.key,
        headers: a.idempotencyKey ? { 'idempotency-key': a.idempotencyKey } : {},
        body: {
          personalizations: [{ to: [{ email: a.to }] }],
          subject: a.subject ?? 'Gate',
          content: [{ type: 'text/html', value: '<p>gate</p>' }],
          ...(a.attachment ? { attachments: [{ content: 'aGVsbG8=', filename: 'a.txt' }] } : {}),
        },
      });
      if (res.status === 202) return null;
      // SendGrid's error list; the Gatepost code rides in a header.
      expect(res.body.errors[0]).toMatchObject({ message: expect.any(String) });
      return { code: res.headers.get('gatepost-error-code')!, status: res.status, retryAfter: res.headers.get('retry-after') };
    },
  },
  {
    name: 'POST /v3/:domain/messages (Style M)',
    overQuota: TOO_MANY,
    async send(a) {
      const form = new URLSearchParams({ to: a.to, subject: a.subject ?? 'Gate', html: '<p>gate</p>' });
      if (a.attachment) form.append('attachment', 'hello');
      const res = await suite.gp.request('POST', '/v3/mg.example.com/messages', {
        body: form.toString(),
        headers: {
          authorization: `Basic ${Buffer.from(`api:${a.key}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          ...(a.idempotencyKey ? { 'idempotency-key': a.idempotencyKey } : {}),
        },
      });
      if (res.status === 200) return null;
      // Mailgun's {"message"}; the Gatepost code rides in a header.
      expect(res.body).toMatchObject({ message: expect.any(String) });
      return { code: res.headers.get('gatepost-error-code')!, status: res.status, retryAfter: res.headers.get('retry-after') };
    },
  },
  {
    name: 'SMTP submission',
    // A temporary refusal (452 4.5.3): SMTP has no Retry-After; the client's queue retries.
    overQuota: { status: 452, retryAfter: null },
    async send(a) {
      const message = {
        from: 'app@sender.example',
        to: a.to,
        subject: a.subject ?? 'Gate',
        html: '<p>gate</p>',
        // SMTP's idempotency key is the Message-ID.
        ...(a.idempotencyKey ? { messageId: `<${a.idempotencyKey}@gate.test>` } : {}),
        ...(a.attachment ? { attachments: [{ filename: 'a.txt', content: 'hello' }] } : {}),
      };
      try {
        await submission(suite.gp, a.key).sendMail(message);
        return null;
      } catch (error) {
        const { response, responseCode } = error as { response?: string; responseCode?: number };
        if (!response) throw error;
        return { code: catalogCodeOf(response), status: responseCode!, retryAfter: null };
      }
    },
  },
];

describe.each(ingresses)('the gate through $name', (ingress) => {
  it('refuses a suppressed recipient, and nothing is sent', async () => {
    const t = await suite.gp.tenant();
    const to = `suppressed-${Math.random().toString(36).slice(2)}@example.com`;
    expect((await suite.gp.request('POST', '/v1/suppressions', { key: t.live, body: { address: to } })).status).toBe(201);
    expect(await ingress.send({ key: t.live, to })).toMatchObject({ code: 'recipient_suppressed' });
    expect(await ingress.send({ key: t.sandbox, to })).toMatchObject({ code: 'recipient_suppressed' });
    // Case does not matter to suppression.
    expect(await ingress.send({ key: t.live, to: to.toUpperCase() })).toMatchObject({ code: 'recipient_suppressed' });
  });

  it('refuses sends over the per-day quota, with Retry-After where the answer is HTTP', async () => {
    const t = await suite.gp.tenant({ quota: { per_day: 2 } });
    expect(await ingress.send({ key: t.live, to: 'q1@example.com' })).toBeNull();
    expect(await ingress.send({ key: t.live, to: 'q2@example.com' })).toBeNull();
    expect(await ingress.send({ key: t.live, to: 'q3@example.com' })).toEqual({ code: 'quota_exceeded', ...ingress.overQuota });
  });

  it('refuses an attachment, never sending without it', async () => {
    const t = await suite.gp.tenant();
    const to = `attach-${Math.random().toString(36).slice(2)}@example.com`;
    expect(await ingress.send({ key: t.live, to, attachment: true })).toMatchObject({ code: 'attachments_unsupported' });
    // A later send through the same door arrives; the refused one, before it, never did.
    await laterMailArrived(suite, async (later) => expect(await ingress.send({ key: t.live, to: later })).toBeNull());
    expect(suite.relay.received.some((r) => r.to.includes(to))).toBe(false);
  });

  it('refuses an idempotency key reused with a different body', async () => {
    const t = await suite.gp.tenant();
    expect(await ingress.send({ key: t.live, to: 'i@example.com', idempotencyKey: 'gate-key' })).toBeNull();
    expect(await ingress.send({ key: t.live, to: 'i@example.com', idempotencyKey: 'gate-key', subject: 'Other' })).toMatchObject({
      code: 'idempotency_key_reused',
    });
  });
});

describe('quota', () => {
  it('refuses sends over the per-second rate with 429 and Retry-After: 1', async () => {
    const t = await suite.gp.tenant({ quota: { per_second: 3 } });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        suite.gp.request('POST', '/v1/emails', {
          key: t.sandbox,
          body: { to: `r${i}@example.com`, subject: 's', html: '<p>h</p>' },
        }),
      ),
    );
    const limited = answers.filter((a) => a.status === 429);
    // Ten at once against three a second: whichever second they land in, most are refused.
    expect(limited.length).toBeGreaterThanOrEqual(4);
    expect(limited[0]!.body.error.code).toBe('rate_limited');
    expect(limited[0]!.headers.get('retry-after')).toBe('1');
  });

  it('is set and changed through the admin API', async () => {
    const t = await suite.gp.tenant();
    const send = () =>
      suite.gp.request('POST', '/v1/emails', { key: t.sandbox, body: { to: 'c@example.com', subject: 's', html: '<p>h</p>' } });
    expect((await send()).status).toBe(202);
    const patched = await suite.gp.admin('PATCH', `/tenants/${t.id}`, { quota: { per_day: 1 } });
    expect(patched.body.quota).toEqual({ per_second: null, per_day: 1 });
    expect((await send()).status).toBe(429);
    await suite.gp.admin('PATCH', `/tenants/${t.id}`, { quota: { per_day: null } });
    expect((await send()).status).toBe(202);
  });
});

describe('suppressions', () => {
  it('lists, adds, gets and removes suppressions', async () => {
    const t = await suite.gp.tenant();
    const added = await suite.gp.request('POST', '/v1/suppressions', {
      key: t.live,
      body: { address: 'Gone@Example.com', reason: 'unsubscribe' },
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ address: 'gone@example.com', reason: 'unsubscribe' });
    const list = await eventually(async () => {
      const l = await suite.gp.request('GET', '/v1/suppressions', { key: t.live });
      return l.body.data.length === 1 ? l : undefined;
    });
    expect(list.body.data[0]).toMatchObject({ address: 'gone@example.com', reason: 'unsubscribe' });
    expect((await suite.gp.request('GET', '/v1/suppressions/gone@example.com', { key: t.live })).status).toBe(200);
    expect((await suite.gp.request('DELETE', '/v1/suppressions/gone@example.com', { key: t.live })).status).toBe(204);
    expect((await suite.gp.request('GET', '/v1/suppressions/gone@example.com', { key: t.live })).status).toBe(404);
    await eventually(async () => (await suite.gp.request('GET', '/v1/suppressions', { key: t.live })).body.data.length === 0);
    expect((await suite.gp.request('DELETE', '/v1/suppressions/gone@example.com', { key: t.live })).status).toBe(404);
    const sent = await suite.gp.request('POST', '/v1/emails', {
      key: t.live,
      body: { to: 'gone@example.com', subject: 's', html: '<p>h</p>' },
    });
    expect(sent.status).toBe(202);
    expect((await suite.gp.request('POST', '/v1/suppressions', { key: t.live, body: { address: 'nope' } })).status).toBe(400);
  });

  it('pages through the list with a cursor', async () => {
    const t = await suite.gp.tenant();
    for (let i = 0; i < 5; i++) {
      await suite.gp.request('POST', '/v1/suppressions', { key: t.live, body: { address: `p${i}@example.com` } });
    }
    await eventually(async () => (await suite.gp.request('GET', '/v1/suppressions', { key: t.live })).body.data.length === 5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { address: string }[]; next_cursor: string | null } } = await suite.gp.request(
        'GET',
        `/v1/suppressions?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { key: t.live },
      );
      seen.push(...page.body.data.map((s) => s.address));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['p0@example.com', 'p1@example.com', 'p2@example.com', 'p3@example.com', 'p4@example.com']);
    expect((await suite.gp.request('GET', '/v1/suppressions?cursor=garbage', { key: t.live })).status).toBe(400);
  });
});
