// A sending domain's own tracking host and the mailto unsubscribe address (issue 24 items 3 and
// 4), end to end on a started Gatepost (either runtime) with a DNS server on loopback: the domain
// names a tracking host, its CNAME shows among the domain's records and verifies, and mail from the
// domain then links under that host, which Gatepost answers on whatever Host a request names; the
// List-Unsubscribe mailto address, on the domain's return path, unsubscribes over SMTP to the
// inbound MX, and a forged one is refused at RCPT.
import { request as httpRequest } from 'node:http';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeToken, newTrackingKey } from '../../mail/tracking.token.ts';
import { publish } from '../harness/domains.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';

let gp: GatepostProcess;
let dns: DnsServer;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;

const DOMAIN = 'news.example';
const TRACKING_HOST = 'track.news.example';
const DESTINATION = 'https://news.example/story?id=7';

beforeAll(async () => {
  dns = await startDns();
  gp = await startGatepost({ env: { GATEPOST_DNS_SERVERS: dns.address } });
  tenant = await gp.tenant();
});
afterAll(async () => {
  await gp?.dispose();
  await dns?.close();
});

/** GET `url` at Gatepost's own address, naming the URL's host (and port) in the Host header, as a CNAME'd request arrives. */
function getVia(url: string, userAgent: string): Promise<{ status: number; location: string | undefined }> {
  const target = new URL(url);
  const own = new URL(gp.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: own.hostname, port: own.port, path: target.pathname, headers: { host: target.host, 'user-agent': userAgent } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
      },
    );
    req.on('error', reject).end();
  });
}

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

async function eventsOf(id: string, type: string, count = 1) {
  return eventually(async () => {
    const { body } = await gp.request('GET', `/v1/messages/${id}`, { key: tenant.sandbox });
    const found = (body.events as { type: string; data: Record<string, unknown> }[]).filter((e) => e.type === type);
    return found.length >= count && found;
  });
}

async function sendBroadcast(to: string): Promise<{ id: string; html: string; listUnsubscribe: string }> {
  const sent = await gp.request('POST', '/v1/emails', {
    key: tenant.sandbox,
    body: {
      from: `News <letters@${DOMAIN}>`,
      to,
      subject: 'This week',
      html: `<html><body><a href="${DESTINATION}">Read</a> <a href="{{unsubscribe_url}}">Unsubscribe</a></body></html>`,
      stream: 'broadcast',
    },
  });
  expect(sent.status).toBe(202);
  const id = sent.body.id as string;
  const captured = await eventually(async () => {
    const c = await gp.request('GET', `/v1/sandbox/messages/${id}`, { key: tenant.sandbox });
    return c.status === 200 && c.body;
  });
  return { id, html: captured.html, listUnsubscribe: captured.headers['List-Unsubscribe'] };
}

/** Mail to `to` over SMTP to the inbound MX, as a mail provider acting on List-Unsubscribe sends it. */
const mailTo = (to: string) =>
  nodemailer
    .createTransport({
      host: '127.0.0.1',
      port: gp.inboundPort,
      secure: false,
      name: 'mx.provider.test',
      tls: { rejectUnauthorized: false },
    })
    .sendMail({
      envelope: { from: 'bounce@provider.test', to: [to] },
      from: 'reader@provider.test',
      to,
      subject: 'unsubscribe',
      text: '',
    });

describe("a sending domain's tracking host", () => {
  it('is checked as a host name under the domain, shown as a CNAME record, verified, and changed by PATCH', async () => {
    const bad = await gp.request('POST', '/v1/domains', {
      key: tenant.live,
      body: { name: DOMAIN, tracking_host: 'track.elsewhere.example' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({ code: 'tracking_host_invalid', details: [{ field: 'tracking_host' }] });

    const created = await gp.request('POST', '/v1/domains', {
      key: tenant.live,
      body: { name: DOMAIN, tracking_host: TRACKING_HOST },
    });
    expect(created.status).toBe(201);
    expect(created.body.tracking_host).toBe(TRACKING_HOST);
    const cname = created.body.records.find((r: { purpose: string }) => r.purpose === 'tracking');
    expect(cname).toMatchObject({
      type: 'CNAME',
      name: TRACKING_HOST,
      value: 'gatepost.test',
      required: false,
      status: 'pending',
    });

    for (const body of [{ tracking_host: 'news.example' }, { tracking_host: 'not a host' }, { tracking_host: 7 }, {}]) {
      const patched = await gp.request('PATCH', `/v1/domains/${created.body.id}`, { key: tenant.live, body });
      expect(patched.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(patched.status, JSON.stringify(body)).toBeLessThan(500);
    }
    const moved = await gp.request('PATCH', `/v1/domains/${created.body.id}`, {
      key: tenant.live,
      body: { tracking_host: null },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.records.some((r: { purpose: string }) => r.purpose === 'tracking')).toBe(false);
    const back = await gp.request('PATCH', `/v1/domains/${created.body.id}`, {
      key: tenant.live,
      body: { tracking_host: TRACKING_HOST },
    });
    expect(back.body.tracking_host).toBe(TRACKING_HOST);

    publish(dns, back.body.records);
    const verified = await gp.request('POST', `/v1/domains/${created.body.id}/verify`, { key: tenant.live });
    expect(verified.body.status).toBe('verified');
    expect(verified.body.records.find((r: { purpose: string }) => r.purpose === 'tracking')).toMatchObject({
      status: 'verified',
      found: ['gatepost.test'],
    });
  });

  it("puts the domain's mail's links under the tracking host; a click and an open with that Host are recorded", async () => {
    const to = `reader-${Date.now()}@example.com`;
    const { id, html, listUnsubscribe } = await sendBroadcast(to);
    const base = new URL(gp.url);
    // GATEPOST_PUBLIC_URL's scheme and port, the tracking host's name.
    const under = `${base.protocol}//${TRACKING_HOST}:${base.port}`;
    const links = hrefs(html);
    const tracked = links.find((l) => l.includes('/t/c/'))!;
    expect(tracked.startsWith(`${under}/t/c/`)).toBe(true);
    expect(links.find((l) => l.includes('/u/'))!.startsWith(`${under}/u/`)).toBe(true);
    const pixel = /<img src="([^"]*)"/.exec(html)![1]!;
    expect(pixel.startsWith(`${under}/t/o/`)).toBe(true);
    expect(listUnsubscribe).toMatch(
      new RegExp(`^<${under}/u/${id}\\.[^>]+>, <mailto:u\\+${id}\\.[^@]+@bounces\\.news\\.example\\?subject=unsubscribe>$`),
    );

    expect(await getVia(tracked, 'Reader/2.0')).toEqual({ status: 302, location: DESTINATION });
    const [clicked] = await eventsOf(id, 'email.clicked');
    expect(clicked!.data).toMatchObject({ url: DESTINATION, user_agent: 'Reader/2.0' });
    expect((await getVia(pixel, 'Reader/2.0')).status).toBe(200);
    const [opened] = await eventsOf(id, 'email.opened');
    expect(opened!.data).toMatchObject({ first: true, user_agent: 'Reader/2.0' });
  });
});

describe('the mailto unsubscribe address', () => {
  it('unsubscribes through the inbound MX as the one-click POST does: email.unsubscribed, and the recipient suppressed', async () => {
    const to = `mailto-${Date.now()}@example.com`;
    const { id, listUnsubscribe } = await sendBroadcast(to);
    const address = /<mailto:([^?>]+)\?/.exec(listUnsubscribe)![1]!;
    const sent = await mailTo(address);
    expect(sent.accepted).toEqual([address]);

    const [unsubscribed] = await eventsOf(id, 'email.unsubscribed');
    expect(unsubscribed!.data).toMatchObject({ to, via: 'mailto' });
    const suppression = await eventually(async () => {
      const s = await gp.request('GET', `/v1/suppressions/${encodeURIComponent(to)}`, { key: tenant.live });
      return s.status === 200 && s.body;
    });
    expect(suppression).toMatchObject({ address: to, reason: 'unsubscribe' });

    // Sent again (a provider retrying), it is accepted and changes nothing more.
    expect((await mailTo(address)).accepted).toEqual([address]);
    const { body } = await gp.request('GET', `/v1/messages/${id}`, { key: tenant.sandbox });
    expect(body.events.filter((e: { type: string }) => e.type === 'email.unsubscribed')).toHaveLength(1);
  });

  it('refuses a tampered or unknown token at RCPT with 550 5.1.1', async () => {
    const { id, listUnsubscribe } = await sendBroadcast(`forged-${Date.now()}@example.com`);
    const address = /<mailto:([^?>]+)\?/.exec(listUnsubscribe)![1]!;
    const [local, domain] = address.split('@') as [string, string];
    // The signature's last character changed; a token for another message; one signed with another key.
    const last = local.at(-1) === 'A' ? 'B' : 'A';
    const other = 'msg_06h1cbvwhrrcy7kyextq6893qg';
    for (const forged of [
      `${local.slice(0, -1)}${last}@${domain}`,
      `u+${other}.${local.slice(local.lastIndexOf('.') + 1)}@${domain}`,
      `u+${makeToken(newTrackingKey(), 'unsubscribe', id)}@${domain}`,
      `u+nonsense@${domain}`,
    ]) {
      const refused = await mailTo(forged).catch((error: { responseCode?: number; response?: string }) => error);
      expect(refused, forged).toMatchObject({ responseCode: 550, response: expect.stringContaining('5.1.1') });
    }
    const { body } = await gp.request('GET', `/v1/messages/${id}`, { key: tenant.sandbox });
    expect(body.events.some((e: { type: string }) => e.type === 'email.unsubscribed')).toBe(false);
  });
});
