// Bounces and complaints close the loop, end to end on a started Gatepost (either runtime): a
// live message is delivered straight to its recipient's MX host (so it leaves with a VERP
// return-path), then the report a receiving system would send comes back over SMTP to Gatepost's
// inbound MX: a DSN (RFC 3464) to the VERP address, an ARF report (RFC 5965) to the feedback-loop
// address. Each becomes an event on the message's timeline and its webhook, and a suppression.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../sdk/node/webhooks.ts';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';
import { startReceiver, type Receiver } from '../harness/receiver.harness.ts';

let gp: GatepostProcess;
let dns: DnsServer;
let mx: MxHost;
let receiver: Receiver;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;
let secret = '';

beforeAll(async () => {
  const port = await freePort();
  mx = await startMx('127.0.0.2', port);
  dns = await startDns({ 'mx.ok.test': { A: [mx.ip] }, 'ok.test': { MX: [{ exchange: 'mx.ok.test', priority: 10 }] } });
  receiver = await startReceiver();
  gp = await startGatepost({
    env: { GATEPOST_DNS_SERVERS: dns.address, GATEPOST_MX_PORT: String(port), GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1' },
  });
  tenant = await gp.tenant();
  await verifiedDomainOver(gp, dns, tenant.live, 'sender.example');
  const hook = await gp.request('POST', '/v1/webhooks', {
    key: tenant.live,
    body: { url: `${receiver.url}/reports`, events: ['email.bounced', 'email.complained'] },
  });
  expect(hook.status).toBe(201);
  secret = hook.body.secret;
});
afterAll(async () => {
  await gp?.dispose();
  await mx?.close();
  await receiver?.close();
  await dns?.close();
});

/** Sends live mail to `to` and waits for it at the MX host: its id, and what the MX received (envelope sender and bytes). */
async function delivered(to: string) {
  const res = await gp.request('POST', '/v1/emails', {
    key: tenant.live,
    body: { from: 'Shop <news@sender.example>', to, subject: 'Weekly deals', html: '<p>Deals</p>' },
  });
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  const received = await eventually(() => mx.received.find((r) => r.to.includes(to)), 30_000);
  // The 250 on its timeline too: a report comes back after it.
  await eventually(
    async () => (await gp.request('GET', `/v1/messages/${id}`, { key: tenant.live })).body.status === 'sent',
    30_000,
  );
  return { id, received };
}

/** What a receiving MTA does: connects to the inbound MX and hands over `raw`, from the null sender. */
const report = (to: string, raw: string) =>
  nodemailer
    .createTransport({
      host: '127.0.0.1',
      port: gp.inboundPort,
      secure: false,
      name: 'mx.ok.test',
      tls: { rejectUnauthorized: false },
    })
    .sendMail({ envelope: { from: '', to: [to] }, raw });

const headersOf = (raw: string) => raw.slice(0, raw.search(/\r?\n\r?\n/));

/** The signed webhook of `type` about message `id`. */
const webhookOf = (type: string, id: string) =>
  eventually(() => {
    const d = receiver.received.find((r) => r.path === '/reports' && r.body.includes(`"${type}"`) && r.body.includes(id));
    return d && verifyWebhook<Record<string, any>>({ payload: d.body, headers: d.headers, secret });
  }, 30_000);

describe('bounces and complaints that come back', () => {
  it('a DSN to the VERP return-path of a delivered message: email.bounced (hard), the message bounced, the recipient suppressed', async () => {
    const { id, received } = await delivered('gone@ok.test');
    expect(received.from).toBe(`b+${id}@bounces.sender.example`);
    const dsn = [
      'From: MAILER-DAEMON@mx.ok.test (Mail Delivery System)',
      `To: ${received.from}`,
      'Subject: Undelivered Mail Returned to Sender',
      'Auto-Submitted: auto-replied',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="B1"',
      '',
      '--B1',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered to gone@ok.test: the mailbox was closed.',
      '',
      '--B1',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.ok.test',
      '',
      'Final-Recipient: rfc822; gone@ok.test',
      'Original-Recipient: rfc822;gone@ok.test',
      'Action: failed',
      'Status: 5.1.1',
      'Remote-MTA: dns; store.ok.test',
      'Diagnostic-Code: smtp; 550 5.1.1 <gone@ok.test>: mailbox closed',
      '',
      '--B1',
      'Content-Type: text/rfc822-headers',
      '',
      headersOf(received.raw),
      '',
      '--B1--',
      '',
    ].join('\r\n');
    const answer = await report(received.from, dsn);
    expect(answer.response).toMatch(/^250 /);

    const event = await webhookOf('email.bounced', id);
    // It names the domain the message went out from, whose reputation breaker counts it.
    expect(event.data).toMatchObject({ message_id: id, bounce_type: 'hard', source: 'dsn', sending_domain: 'sender.example' });
    const message = (await gp.request('GET', `/v1/messages/${id}`, { key: tenant.live })).body;
    expect(message.status).toBe('bounced');
    expect(message.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['email.sent', 'email.bounced']));
    const suppression = await gp.request('GET', '/v1/suppressions/gone@ok.test', { key: tenant.live });
    expect(suppression.body).toMatchObject({ address: 'gone@ok.test', reason: 'hard_bounce' });
    const { body: reports } = await gp.request('GET', '/v1/reports', { key: tenant.live });
    expect(reports.data).toContainEqual(expect.objectContaining({ kind: 'dsn', outcome: 'recorded', message_id: id }));
  });

  it('an ARF abuse report to the feedback-loop address: email.complained, the recipient suppressed', async () => {
    const { id, received } = await delivered('reader@ok.test');
    const arf = [
      'From: Feedback Loop <feedback@fbl.ok.test>',
      'To: fbl@bounces.sender.example',
      'Subject: FW: Weekly deals',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=feedback-report; boundary="F1"',
      '',
      '--F1',
      'Content-Type: text/plain',
      '',
      'This is an email abuse report for an email message from sender.example.',
      '',
      '--F1',
      'Content-Type: message/feedback-report',
      '',
      'Feedback-Type: abuse',
      'User-Agent: OkMail-Feedback/1.0',
      'Version: 1',
      `Original-Mail-From: <${received.from}>`,
      'Original-Rcpt-To: reader@ok.test',
      'Reported-Domain: sender.example',
      '',
      '--F1',
      'Content-Type: message/rfc822',
      '',
      received.raw.replace(/\r?\n$/, ''),
      '',
      '--F1--',
      '',
    ].join('\r\n');
    const answer = await report('fbl@bounces.sender.example', arf);
    expect(answer.response).toMatch(/^250 /);

    const event = await webhookOf('email.complained', id);
    expect(event.data).toMatchObject({ message_id: id, feedback_type: 'abuse', sending_domain: 'sender.example' });
    const suppression = await gp.request('GET', '/v1/suppressions/reader@ok.test', { key: tenant.live });
    expect(suppression.body).toMatchObject({ address: 'reader@ok.test', reason: 'complaint' });
  });

  it('a DSN naming a message of another tenant is kept as unrecognised, and that message is untouched', async () => {
    const { id, received } = await delivered('kept@ok.test');
    const other = await gp.tenant();
    await verifiedDomainOver(gp, dns, other.live, 'other.example');
    const forged = [
      'From: MAILER-DAEMON@mx.ok.test',
      'Subject: Undelivered Mail Returned to Sender',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="B2"',
      '',
      '--B2',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.ok.test',
      '',
      'Final-Recipient: rfc822; kept@ok.test',
      'Action: failed',
      'Status: 5.1.1',
      '',
      '--B2--',
      '',
    ].join('\r\n');
    // The message's id, at the other tenant's return-path domain.
    const answer = await report(`b+${id}@bounces.other.example`, forged);
    expect(answer.response).toMatch(/^250 /);
    const { body: reports } = await eventually(async () => {
      const r = await gp.request('GET', '/v1/reports', { key: other.live });
      return r.body.data.length > 0 && r;
    });
    expect(reports.data).toEqual([expect.objectContaining({ outcome: 'unrecognised', message_id: id })]);
    expect(received.to).toEqual(['kept@ok.test']);
    const message = (await gp.request('GET', `/v1/messages/${id}`, { key: tenant.live })).body;
    expect(message.status).toBe('sent');
    expect((await gp.request('GET', '/v1/suppressions/kept@ok.test', { key: tenant.live })).status).toBe(404);
  });
});
