// What a careless or hostile client sends is refused with a coded error in each ingress's own
// format, never a 500 and never half-read (issue 20, items 5 and 9): control characters in an
// address field, and merge data nested 10,000 deep with an idempotency key (which overflowed
// the stack while hashing the request).
import { describe, expect, it } from 'vitest';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const INJECTED = 'ann@example.com\r\nBcc: v@example.com';
// As text: JSON.stringify itself runs out of stack on it.
const DEEP = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
const PLACE = '__deep__';
/** The body as JSON text, with DEEP where it holds PLACE. */
const withDeep = (body: unknown) => JSON.stringify(body).replace(`"${PLACE}"`, DEEP);

const native = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  suite.gp.request('POST', '/v1/emails', {
    key: suite.tenant.sandbox,
    headers,
    body: withDeep({ from: 'a@sender.example', subject: 's', html: '<p>{{a}}</p>', ...body }),
  });
const styleP = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  suite.gp.request('POST', '/email', {
    headers: { 'x-postmark-server-token': suite.tenant.sandbox, accept: 'application/json', ...headers },
    body: { From: 'a@sender.example', Subject: 's', HtmlBody: '<p>h</p>', ...body },
  });
const styleS = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  suite.gp.request('POST', '/v3/mail/send', {
    key: suite.tenant.sandbox,
    headers,
    body: withDeep({
      from: { email: 'a@sender.example' },
      subject: 's',
      content: [{ type: 'text/html', value: '<p>{{a}}</p>' }],
      ...body,
    }),
  });
const styleM = (fields: Record<string, string>, domain = 'mg.example.com', headers: Record<string, string> = {}) =>
  suite.gp.request('POST', `/v3/${domain}/messages`, {
    headers: {
      authorization: `Basic ${Buffer.from(`api:${suite.tenant.sandbox}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams({ from: 'a@sender.example', subject: 's', html: '<p>h</p>', ...fields }).toString(),
  });

describe('control characters in address fields', () => {
  it('native and Style S refuse them, as before', async () => {
    const n = await native({ to: INJECTED });
    expect(n.status).toBe(400);
    expect(n.body.error.code).toBe('invalid_request');
    const s = await styleS({ personalizations: [{ to: [{ email: INJECTED }] }] });
    expect(s.status).toBe(400);
    expect(s.body.errors[0].field).toBe('personalizations.0.to.0.email');
  });

  it('Style P refuses them in Postmark’s format, naming the field', async () => {
    for (const field of ['To', 'Cc', 'Bcc']) {
      const res = await styleP({ To: 'bo@example.com', [field]: INJECTED });
      expect(res.status, field).toBe(422);
      expect(res.body.ErrorCode, field).toBe(300);
      expect(res.body.Message, field).toMatch(new RegExp(`${field}.*control character`));
    }
  });

  it('Style M refuses them in Mailgun’s format, naming the parameter', async () => {
    for (const name of ['to', 'cc', 'bcc']) {
      const res = await styleM({ to: 'bo@example.com', [name]: INJECTED });
      expect(res.status, name).toBe(400);
      expect(res.body.message, name).toBe(`'${name}' parameter is invalid: holds a control character (CR, LF, NUL, ...)`);
    }
  });
});

describe('merge data nested 10,000 deep, with an idempotency key', () => {
  it('is a coded 400 on every ingress that takes data, in its own format', async () => {
    const n = await native({ to: 'b@example.com', data: PLACE }, { 'idempotency-key': 'deep-n' });
    expect(n.status).toBe(400);
    expect(n.body.error.details).toEqual([{ field: 'data', message: 'nests objects or arrays more than 32 deep' }]);

    const s = await styleS(
      { personalizations: [{ to: [{ email: 'b@example.com' }], dynamic_template_data: PLACE }], template_id: 'none' },
      { 'idempotency-key': 'deep-s' },
    );
    expect(s.status).toBe(400);
    expect(JSON.stringify(s.body)).toMatch(/more than 32 deep/);

    const p = await suite.gp.request('POST', '/email/withTemplate', {
      headers: { 'x-postmark-server-token': suite.tenant.sandbox, accept: 'application/json', 'idempotency-key': 'deep-p' },
      body: withDeep({ From: 'a@sender.example', To: 'b@example.com', TemplateAlias: 'none', TemplateModel: PLACE }),
    });
    expect(p.status).toBe(422);
    expect(p.body.ErrorCode).toBe(300);
    expect(p.body.Message).toMatch(/more than 32 deep/);

    const m = await styleM({ to: 'b@example.com', 't:variables': DEEP }, 'mg.example.com', {
      'idempotency-key': 'deep-m',
    });
    expect(m.status).toBe(400);
    expect(m.body.message).toMatch(/more than 32 deep/);
  });
});

describe('Style M domain', () => {
  it('refuses a domain that is not a domain name', async () => {
    const res = await styleM({ to: 'b@example.com' }, 'not_a_domain');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("'domain' parameter is not a domain name");
  });
});

describe('custom headers', () => {
  it('refuses Content-Disposition, which would show the whole message as an attachment', async () => {
    const res = await native({ to: 'b@example.com', headers: { 'Content-Disposition': 'attachment; filename="x.exe"' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { field: 'headers.Content-Disposition', message: 'set by Gatepost; use the dedicated field instead' },
    ]);
  });
});
