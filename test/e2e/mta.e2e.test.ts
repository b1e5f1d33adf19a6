// Direct delivery end to end (no relay): a live send through POST /v1/emails reaches the
// recipient domain's MX host, which the loopback DNS server names, and the message's timeline
// shows who answered, over what, and the whole reply; a 451 defers and then delivers, a 5.1.1
// suppresses the recipient, a 5.7.1 bounces as a block and suppresses nobody; recipients on two
// domains get one transaction each, and a retry goes only to the domain that deferred. The
// sender's domain is verified (it has to be, with direct delivery), so what arrives is DKIM-signed;
// a sandbox capture from it is signed the same way, and its raw source passes DKIM.
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';

let gp: GatepostProcess;
let dns: DnsServer;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;
const mx: Record<'ok' | 'defer' | 'refuse' | 'block' | 'later', MxHost> = {} as never;

/** The sender of every message here. */
const FROM = 'App <app@sender.example>';

beforeAll(async () => {
  const port = await freePort();
  mx.ok = await startMx('127.0.0.2', port, { starttls: true });
  mx.defer = await startMx('127.0.0.3', port, { verdict: () => ({ code: 451, text: '4.3.0 Try again later' }) });
  mx.refuse = await startMx('127.0.0.4', port, { verdict: () => ({ code: 550, text: '5.1.1 No such user here' }) });
  mx.block = await startMx('127.0.0.5', port, { verdict: () => ({ code: 554, text: '5.7.1 Listed at a blocklist' }) });
  mx.later = await startMx('127.0.0.6', port, { verdict: () => ({ code: 451, text: '4.3.0 Try again later' }) });
  const records: Parameters<typeof startDns>[0] = {};
  for (const [name, host] of Object.entries(mx)) {
    records[`mx-${name}.test`] = { A: [host.ip] };
    records[`${name}.test`] = { MX: [{ exchange: `mx-${name}.test`, priority: 10 }] };
  }
  dns = await startDns(records);
  gp = await startGatepost({
    env: { GATEPOST_DNS_SERVERS: dns.address, GATEPOST_MX_PORT: String(port), GATEPOST_DELIVERY_RETRY: '1s,1s,1s,1s,1s,1s' },
  });
  tenant = await gp.tenant();
  // Direct delivery sends only from a verified domain, DKIM-signed.
  await verifiedDomainOver(gp, dns, tenant.live, 'sender.example');
});

afterAll(async () => {
  await gp?.dispose();
  await Promise.all(Object.values(mx).map((h) => h.close()));
  await dns?.close();
});

async function send(to: string): Promise<string> {
  const res = await gp.request('POST', '/v1/emails', {
    key: tenant.live,
    body: { from: FROM, to, subject: 'Direct', html: '<p>d</p>' },
  });
  expect(res.status).toBe(202);
  return res.body.id;
}

const message = async (id: string) => (await gp.request('GET', `/v1/messages/${id}`, { key: tenant.live })).body;
const settled = (id: string, status: string) =>
  eventually(async () => ((await message(id)).status === status ? message(id) : undefined), 30_000);
const suppression = (address: string) => gp.request('GET', `/v1/suppressions/${address}`, { key: tenant.live });

describe('direct delivery to MX', () => {
  it('delivers to the MX host over STARTTLS; the timeline shows MX host, IP, TLS and the whole reply', async () => {
    const id = await send('bob@ok.test');
    const m = await settled(id, 'sent');
    const sent = m.events.find((e: { type: string }) => e.type === 'email.sent');
    expect(sent.data).toMatchObject({
      to: 'bob@ok.test',
      attempt: 1,
      sandbox: false,
      mx: 'mx-ok.test',
      ip: '127.0.0.2',
      tls: { version: expect.stringMatching(/^TLSv1\.[23]$/), cipher: expect.any(String) },
      smtp_code: 250,
      response: expect.stringContaining('Queued as q1'),
      // The verified From domain, whose reputation breaker counts the outcome.
      sending_domain: 'sender.example',
    });
    expect(Date.parse(sent.data.accepted_at)).toBeGreaterThanOrEqual(Date.parse(sent.data.connected_at));
    const got = mx.ok.received.filter((r) => r.to.includes('bob@ok.test'));
    expect(got).toHaveLength(1);
    // The return-path is a VERP address on the verified domain's bounce subdomain: a bounce names its message.
    expect(got[0]).toMatchObject({ from: `b+${id}@bounces.sender.example`, ehlo: 'gatepost.test', cipher: sent.data.tls.cipher });
    expect(got[0]!.parsed.messageId).toBe(m.message_id_header);

    // Both DKIM signatures pass at the receiving end, checked by mailauth against the published keys.
    const resolver = new Resolver();
    resolver.setServers([dns.address]);
    const { results } = await dkimVerify(Buffer.from(got[0]!.raw), {
      resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]>,
    });
    expect(results.map((r) => [r.signingDomain, r.status.result])).toEqual([
      ['sender.example', 'pass'],
      ['sender.example', 'pass'],
    ]);
  });

  it('451: deferred with the reply on the timeline, then delivered once the MX host accepts', async () => {
    const id = await send('busy@defer.test');
    const deferred = await settled(id, 'deferred');
    expect(deferred.events.at(-1)).toMatchObject({
      type: 'message.deferred',
      data: {
        smtp_code: 451,
        enhanced_code: '4.3.0',
        response: '451 4.3.0 Try again later',
        mx: 'mx-defer.test',
        ip: '127.0.0.3',
        tls: null,
      },
    });
    mx.defer.verdict = () => 'accept';
    const sent = await settled(id, 'sent');
    expect(sent.events.at(-1)).toMatchObject({ type: 'email.sent', data: { smtp_code: 250, mx: 'mx-defer.test' } });
    expect(mx.defer.received.filter((r) => r.to.includes('busy@defer.test'))).toHaveLength(1);
  });

  it('550 5.1.1: a hard bounce, and the recipient is suppressed', async () => {
    const id = await send('nobody@refuse.test');
    const m = await settled(id, 'bounced');
    expect(m.events.at(-1)).toMatchObject({
      type: 'email.bounced',
      data: {
        bounce_type: 'hard',
        smtp_code: 550,
        enhanced_code: '5.1.1',
        response: '550 5.1.1 No such user here',
        mx: 'mx-refuse.test',
      },
    });
    await eventually(async () => (await suppression('nobody@refuse.test')).status === 200);
    expect((await suppression('nobody@refuse.test')).body.reason).toBe('hard_bounce');
  });

  it('554 5.7.1: bounced as a block, and nobody is suppressed', async () => {
    const id = await send('someone@block.test');
    const m = await settled(id, 'bounced');
    expect(m.events.at(-1)).toMatchObject({
      type: 'email.bounced',
      data: { bounce_type: 'block', smtp_code: 554, enhanced_code: '5.7.1', mx: 'mx-block.test' },
    });
    expect((await suppression('someone@block.test')).status).toBe(404);
    // The address may be written to again (the block was about the sender, not the address).
    await send('someone@block.test');
  });

  it('a To on one domain and a Cc on another: one transaction each; a retry goes only to the domain not yet done', async () => {
    // The native API takes one recipient; Style P (Postmark) takes a Cc.
    const res = await gp.request('POST', '/email', {
      body: { From: FROM, To: 'ann@ok.test', Cc: 'cat@later.test', Subject: 'Two domains', HtmlBody: '<p>d</p>' },
      headers: { 'x-postmark-server-token': tenant.live, accept: 'application/json' },
    });
    expect(res.status).toBe(200);
    const id: string = res.body.MessageID;
    const deferred = await settled(id, 'deferred');
    const first = deferred.events.filter((e: { data: { attempt?: number } }) => e.data.attempt === 1);
    expect(first).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'email.sent',
          data: expect.objectContaining({ domain: 'ok.test', recipients: ['ann@ok.test'], mx: 'mx-ok.test' }),
        }),
        expect.objectContaining({
          type: 'message.deferred',
          data: expect.objectContaining({ domain: 'later.test', recipients: ['cat@later.test'], smtp_code: 451, stage: 'rcpt' }),
        }),
      ]),
    );
    mx.later.verdict = () => 'accept';
    const sent = await settled(id, 'sent');
    expect(sent.events.at(-1)).toMatchObject({
      type: 'email.sent',
      data: {
        domain: 'later.test',
        recipients: ['cat@later.test'],
        mx: 'mx-later.test',
        receipt: { id: expect.stringMatching(/^rcp_/) },
      },
    });
    // Each domain's host got the message once, with its own recipients only; the Cc header names both.
    const atOk = mx.ok.received.filter((r) => r.parsed.messageId === sent.message_id_header);
    const atLater = mx.later.received.filter((r) => r.parsed.messageId === sent.message_id_header);
    expect(atOk.map((r) => r.to)).toEqual([['ann@ok.test']]);
    expect(atLater.map((r) => r.to)).toEqual([['cat@later.test']]);
    expect(atLater[0]!.parsed.headers.get('cc')).toMatchObject({ text: 'cat@later.test' });
    const receipts = sent.events
      .filter((e: { type: string }) => e.type === 'email.sent')
      .map((e: { data: { receipt: { id: string } } }) => e.data.receipt.id);
    expect(new Set(receipts).size).toBe(2);
  });
});

describe('sandbox captures, signed as they would be sent', () => {
  /** Sends with the sandbox key; answers the capture once it is in the inbox, its raw source (through a signed-in inbox) and its timeline entry. */
  async function capture(from: string): Promise<{ id: string; view: Record<string, unknown>; raw: Buffer; response: string }> {
    const res = await gp.request('POST', '/v1/emails', {
      key: tenant.sandbox,
      body: { from, to: 'ann@example.com', subject: 'Sandboxed', html: '<p>s</p>' },
    });
    expect(res.status).toBe(202);
    const id: string = res.body.id;
    const view = await eventually(async () => {
      const got = await gp.request('GET', `/v1/sandbox/messages/${id}`, { key: tenant.sandbox });
      return got.status === 200 ? got.body : undefined;
    });
    const signIn = await fetch(`${gp.url}/inbox/session`, {
      method: 'POST',
      body: new URLSearchParams({ key: tenant.sandbox }),
      redirect: 'manual',
    });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const rawAnswer = await fetch(`${gp.url}/inbox/api/messages/${id}/raw`, { headers: { cookie } });
    expect(rawAnswer.status).toBe(200);
    const m = await settled(id, 'sent');
    const captured = m.events.find(
      (e: { type: string; data: { sandbox?: boolean } }) => e.type === 'email.sent' && e.data.sandbox,
    );
    return { id, view, raw: Buffer.from(await rawAnswer.arrayBuffer()), response: captured.data.response };
  }

  const verify = (raw: Buffer) => {
    const resolver = new Resolver();
    resolver.setServers([dns.address]);
    return dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
  };

  it("from the tenant's verified domain: the raw source carries both DKIM signatures, and mailauth passes them", async () => {
    const { view, raw, response } = await capture(FROM);
    expect(view.dkim).toEqual({ d: 'sender.example', s: [expect.any(String), expect.any(String)] });
    const { results } = await verify(raw);
    expect(results.map((r) => [r.signingDomain, r.status.result])).toEqual([
      ['sender.example', 'pass'],
      ['sender.example', 'pass'],
    ]);
    expect(response).toContain('DKIM-signed as it would be sent (d=sender.example');
  });

  it('from a domain with no keys: captured unsigned, and the capture and its timeline say so', async () => {
    const { view, raw, response } = await capture('App <app@elsewhere.example>');
    expect(view.dkim).toBeNull();
    expect(raw.toString()).toContain('Subject: Sandboxed');
    expect((await verify(raw)).results.map((r) => r.status.result)).toEqual(['none']);
    expect(response).toBe(
      'Captured in the sandbox inbox; not delivered. Unsigned: the From domain is not a verified sending domain of the tenant.',
    );
  });
});
