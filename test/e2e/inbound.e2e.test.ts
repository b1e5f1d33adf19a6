// Inbound mail through a real Gatepost process (either runtime): a domain verified with its
// inbound MX record on a loopback DNS server, a route made over HTTP, a DKIM-signed message sent
// with a real SMTP client (nodemailer) to the inbound port, and the signed email.inbound webhook
// at a loopback receiver, with its verdicts; the raw message downloaded from the API.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../sdk/node/webhooks.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { fixture, publishSenders } from '../harness/inbound.harness.ts';
import { startReceiver, type Receiver } from '../harness/receiver.harness.ts';

let dns: DnsServer;
let gp: GatepostProcess;
let receiver: Receiver;
let t: Awaited<ReturnType<GatepostProcess['tenant']>>;

beforeAll(async () => {
  dns = await startDns();
  publishSenders(dns);
  receiver = await startReceiver();
  gp = await startGatepost({
    env: {
      GATEPOST_DNS_SERVERS: dns.address,
      GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1',
      GATEPOST_SPF_INCLUDE: '_spf.gatepost.test',
    },
  });
  t = await gp.tenant();
});
afterAll(async () => {
  await gp?.dispose();
  await receiver?.close();
  await dns?.close();
});

const send = (to: string, raw: Buffer, from = 'alice@sender.test') =>
  nodemailer
    .createTransport({
      host: '127.0.0.1',
      port: gp.inboundPort,
      secure: false,
      name: 'client.sender.test',
      tls: { rejectUnauthorized: false },
    })
    .sendMail({ envelope: { from, to: [to] }, raw });

describe('inbound mail', () => {
  it('a route made over HTTP gets a DKIM-signed message as a signed email.inbound with its verdicts', async () => {
    const domain = await verifiedDomainOver(gp, dns, t.live, 'inbound.test');
    expect(domain.records.find((r) => r.purpose === 'inbound_mx')).toMatchObject({ status: 'verified', value: 'gatepost.test' });
    const hook = await gp.request('POST', '/v1/webhooks', {
      key: t.live,
      body: { url: `${receiver.url}/inbound`, events: ['email.inbound'] },
    });
    expect(hook.status).toBe(201);
    const route = await gp.request('POST', '/v1/inbound/routes', { key: t.live, body: { match: 'support@inbound.test' } });
    expect(route.status).toBe(201);

    const sent = await send('support@inbound.test', fixture('aligned.eml'));
    const id = /\((inm_\w+)\)/.exec(sent.response)![1]!;
    const delivery = await eventually(() => receiver.received.find((d) => d.path === '/inbound' && d.body.includes(id)), 30_000);
    const event = verifyWebhook<Record<string, any>>({
      payload: delivery.body,
      headers: delivery.headers,
      secret: hook.body.secret,
    });
    expect(event).toMatchObject({ type: 'email.inbound', id: expect.stringMatching(/^evt_/) });
    expect(event.data).toMatchObject({
      id,
      route_id: route.body.id,
      from: { address: 'alice@sender.test', name: 'Alice' },
      subject: 'Order 1042: where is it?',
      attachments: [{ filename: 'receipt.txt', size: 18 }],
      auth: {
        spf: { result: 'pass', domain: 'sender.test' },
        dkim: [{ result: 'pass', domain: 'sender.test', selector: 's1', aligned: true }],
        dmarc: { result: 'pass', policy: 'reject' },
      },
    });

    // The URLs work with the tenant's key, wherever the API runs.
    const raw = await fetch(new URL(new URL(event.data.raw_url).pathname, gp.url), {
      headers: { authorization: `Bearer ${t.live}` },
    });
    expect(raw.status).toBe(200);
    expect(Buffer.from(await raw.arrayBuffer())).toEqual(fixture('aligned.eml'));
    const attachment = await fetch(new URL(new URL(event.data.attachments[0].url).pathname, gp.url), {
      headers: { authorization: `Bearer ${t.live}` },
    });
    expect(await attachment.text()).toBe('Order 1042, paid.\n');
  });

  it('refuses mail for an address no route covers and for a domain it does not serve, at RCPT', async () => {
    await expect(send('nobody@inbound.test', fixture('unsigned.eml'))).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringMatching(/5\.1\.1/),
    });
    await expect(send('someone@elsewhere.example', fixture('unsigned.eml'))).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringMatching(/5\.7\.1/),
    });
  });
});
