// Sending domains end to end (issue 21 items 1 and 2), with direct delivery (no relay): a live
// send from an unverified domain is refused on every ingress in its own format, a sandbox key
// captures from any domain, and once the tenant publishes the records on a DNS server (on
// loopback, GATEPOST_DNS_SERVERS) and verifies, the same sends are accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { publish } from '../harness/domains.harness.ts';
import { startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { submission } from '../harness/submission.harness.ts';

let dns: DnsServer;
let gp: GatepostProcess;
let t: Awaited<ReturnType<GatepostProcess['tenant']>>;

const FROM = 'orders@shop.example';

beforeAll(async () => {
  dns = await startDns();
  gp = await startGatepost({ env: { GATEPOST_DNS_SERVERS: dns.address, GATEPOST_SPF_INCLUDE: '_spf.gatepost.test' } });
  t = await gp.tenant({ default_from: `Shop <${FROM}>` });
});
afterAll(async () => {
  await gp?.dispose();
  await dns?.close();
});

// Each send to a recipient of its own: with direct delivery an accepted one bounces (nothing
// serves example.net here), which suppresses its recipient.
let sent = 0;
const recipient = () => `r${++sent}@example.net`;

/** One live send through each ingress, from FROM: what each answered. */
const ingresses = {
  native: (key: string) =>
    gp.request('POST', '/v1/emails', { key, body: { from: FROM, to: recipient(), subject: 's', html: '<p>h</p>' } }),
  styleP: (key: string) =>
    gp.request('POST', '/email', {
      headers: { 'x-postmark-server-token': key, accept: 'application/json' },
      body: { From: FROM, To: recipient(), Subject: 's', HtmlBody: '<p>h</p>' },
    }),
  styleS: (key: string) =>
    gp.request('POST', '/v3/mail/send', {
      key,
      body: {
        personalizations: [{ to: [{ email: recipient() }] }],
        from: { email: FROM },
        subject: 's',
        content: [{ type: 'text/html', value: '<p>h</p>' }],
      },
    }),
  styleM: (key: string) =>
    gp.request('POST', '/v3/shop.example/messages', {
      headers: {
        authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ from: FROM, to: recipient(), subject: 's', html: '<p>h</p>' }).toString(),
    }),
};

const smtp = (key: string) => submission(gp, key).sendMail({ from: FROM, to: recipient(), subject: 's', html: '<p>h</p>' });

describe('sending domains, with direct delivery', () => {
  let domainId = '';

  it('adds a domain with a live key only, and refuses a name that is not a domain', async () => {
    expect((await gp.request('POST', '/v1/domains', { key: t.sandbox, body: { name: 'shop.example' } })).status).toBe(403);
    const bad = await gp.request('POST', '/v1/domains', { key: t.live, body: { name: 'not a domain' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'name' }] });

    const created = await gp.request('POST', '/v1/domains', { key: t.live, body: { name: 'Shop.Example' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^dom_/), name: 'shop.example', status: 'pending' });
    expect(created.body.records.map((r: { purpose: string }) => r.purpose)).toEqual([
      'dkim',
      'dkim',
      'spf',
      'dmarc',
      'return_path',
      'inbound_mx',
    ]);
    domainId = created.body.id;
    expect((await gp.request('POST', '/v1/domains', { key: t.live, body: { name: 'shop.example' } })).body.error.code).toBe(
      'domain_exists',
    );
  });

  it('refuses live mail from it on every ingress, each in its own words, until it is verified', async () => {
    const native = await ingresses.native(t.live);
    expect(native.status).toBe(422);
    expect(native.body.error).toMatchObject({ code: 'sender_not_verified', details: [{ field: 'from' }] });

    const p = await ingresses.styleP(t.live);
    expect(p.status).toBe(422);
    expect(p.body).toEqual({
      ErrorCode: 400,
      Message: `The 'From' address you supplied (${FROM}) is not a Sender Signature on your account. Please add and confirm this address in order to be able to use it in the 'From' field of your messages.`,
    });

    const s = await ingresses.styleS(t.live);
    expect(s.status).toBe(403);
    expect(s.body.errors).toEqual([
      {
        message: expect.stringMatching(/^The from address does not match a verified Sender Identity/),
        field: 'from.email',
        help: null,
      },
    ]);

    const m = await ingresses.styleM(t.live);
    expect(m.status).toBe(403);
    expect(m.body.message).toContain(FROM);

    // In a batch, each item passes the gate on its own, and each is refused.
    const batch = await gp.request('POST', '/v1/emails/batch', {
      key: t.live,
      body: [
        { from: FROM, to: recipient(), subject: 's', html: '<p>h</p>' },
        { from: 'x@elsewhere.example', to: recipient(), subject: 's', html: '<p>h</p>' },
      ],
    });
    expect(batch.body).toMatchObject({
      accepted: 0,
      refused: 2,
      results: [
        { index: 0, error: { code: 'sender_not_verified' } },
        { index: 1, error: { code: 'sender_not_verified' } },
      ],
    });

    await expect(smtp(t.live)).rejects.toMatchObject({ responseCode: 550, response: expect.stringMatching(/^550 5\.7\.1 /) });

    // A sandbox key captures from any domain: nothing of it is delivered.
    expect((await ingresses.native(t.sandbox)).status).toBe(202);
    expect((await smtp(t.sandbox)).response).toMatch(/^250 /);
  });

  it('verifies once the records are published, and then every ingress accepts the same sends', async () => {
    const pending = await gp.request('POST', `/v1/domains/${domainId}/verify`, { key: t.live });
    expect(pending.status).toBe(200);
    expect(pending.body.status).toBe('pending');
    expect(
      pending.body.records.every((r: { status: string; error: string }) => r.status === 'failed' && r.error === 'ENOTFOUND'),
    ).toBe(true);

    publish(dns, pending.body.records);
    const verified = await gp.request('POST', `/v1/domains/${domainId}/verify`, { key: t.live });
    expect(verified.body).toMatchObject({ status: 'verified', verified_at: expect.any(String) });
    expect(verified.body.records.every((r: { status: string }) => r.status === 'verified')).toBe(true);

    expect((await ingresses.native(t.live)).status).toBe(202);
    expect((await ingresses.styleP(t.live)).status).toBe(200);
    expect((await ingresses.styleS(t.live)).status).toBe(202);
    const m = await ingresses.styleM(t.live);
    expect(m.status, JSON.stringify(m.body)).toBe(200);
    expect((await smtp(t.live)).response).toMatch(/^250 /);
    const batch = await gp.request('POST', '/v1/emails/batch', {
      key: t.live,
      body: [
        { from: FROM, to: recipient(), subject: 's', html: '<p>h</p>' },
        { from: 'x@elsewhere.example', to: recipient(), subject: 's', html: '<p>h</p>' },
      ],
    });
    expect(batch.body).toMatchObject({
      accepted: 1,
      refused: 1,
      results: [
        { index: 0, id: expect.stringMatching(/^msg_/) },
        { index: 1, error: { code: 'sender_not_verified' } },
      ],
    });
  });

  it('refuses another tenant the verified name, and refuses mail again once it is deleted', async () => {
    const other = await gp.tenant();
    const taken = await gp.request('POST', '/v1/domains', { key: other.live, body: { name: 'shop.example' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('domain_taken');
    expect((await gp.request('GET', `/v1/domains/${domainId}`, { key: other.live })).status).toBe(404);

    expect((await gp.request('GET', '/v1/domains', { key: t.live })).body.data.map((d: { id: string }) => d.id)).toEqual([
      domainId,
    ]);
    expect((await gp.request('DELETE', `/v1/domains/${domainId}`, { key: t.live })).status).toBe(204);
    expect((await gp.request('GET', `/v1/domains/${domainId}`, { key: t.live })).status).toBe(404);
    expect((await ingresses.native(t.live)).body.error.code).toBe('sender_not_verified');
  });

  it('never shows a private key, in an answer or in what Gatepost logged', async () => {
    const made = await gp.request('POST', '/v1/domains', { key: t.live, body: { name: 'keys.example' } });
    const answers = [
      made,
      await gp.request('GET', '/v1/domains', { key: t.live }),
      await gp.request('GET', `/v1/domains/${made.body.id}`, { key: t.live }),
    ];
    for (const a of answers) expect(JSON.stringify(a.body)).not.toContain('PRIVATE KEY');
    expect(gp.output).not.toContain('PRIVATE KEY');
  });
});
