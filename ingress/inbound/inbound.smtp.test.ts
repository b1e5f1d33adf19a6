// The inbound MX over real sockets: a real SMTP client (nodemailer) and raw SMTP lines against the
// listener, records on the loopback DNS server, a real catalog and actors, and a webhook receiver
// on loopback. Each refusal is a clear reply; each odd message a recorded outcome.
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerActors } from '../../app/gatepost.ts';
import { webhookDeliveries } from '../../gate/webhooks.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';
import { EmbeddedRuntime } from '../../runtime/embedded/runtime.sqlite.ts';
import { verifyWebhook } from '../../sdk/node/webhooks.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { Domains } from '../../tenancy/domains.ts';
import { InboundRoutes } from '../../tenancy/inbound.routes.ts';
import { startDns, type DnsServer } from '../../test/harness/dns.harness.ts';
import { NO_SIGNERS, TEST_RECORD_SETTINGS, verifiedDomain } from '../../test/harness/domains.harness.ts';
import { eventually, tempDir } from '../../test/harness/gatepost.harness.ts';
import { fixture, publishSenders } from '../../test/harness/inbound.harness.ts';
import { startReceiver, type Receiver } from '../../test/harness/receiver.harness.ts';
import { unreachableRelay } from '../../test/harness/relay.harness.ts';
import { SsrfGuard } from '../../webhooks/ssrf.guard.ts';
import { submissionTls } from '../smtp/submission.tls.ts';
import { inboundServer, type InboundServer } from './inbound.smtp.ts';
import { bouncesIntake } from './bounces.intake.ts';
import { mailtoUnsubscribes } from '../../gate/tracking.ts';

const MAX_BYTES = 64 * 1024;
const SECRET = 'whsec_dGVzdC1zZWNyZXQtb2YtdGhlLWluYm91bmQtdGVzdA';

let dns: DnsServer;
let catalog: SqliteCatalog;
let runtime: EmbeddedRuntime;
let server: InboundServer;
let port: number;
let receiver: Receiver;
let tenantId: string;
let drain: () => Promise<void>;

beforeAll(async () => {
  dns = await startDns();
  publishSenders(dns);
  const dir = tempDir('inbound');
  catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  runtime = new EmbeddedRuntime({ file: join(dir, 'actors.db') });
  receiver = await startReceiver();
  ({ drain } = registerActors(runtime, {
    catalog,
    transport: await unreachableRelay(),
    receiptKeys: new ReceiptKeys(catalog),
    signers: NO_SIGNERS,
    retrySchedule: [],
    horizonMs: 0,
    webhooks: {
      guard: new SsrfGuard({ allow: ['127.0.0.0/8'] }),
      retrySchedule: [1000],
      timeoutMs: 5000,
      disableAfterMs: 86_400_000,
    },
  }));
  await runtime.start();
  tenantId = (
    await catalog.createTenant({ id: 'ten_in', name: 'In', default_from: null, quota: { per_second: null, per_day: null } })
  ).id;
  const domains = new Domains(catalog, { ...TEST_RECORD_SETTINGS, dnsServers: [dns.address] });
  // Its records published as Gatepost asks, the inbound MX among them: a domain routes may name.
  await verifiedDomain(domains, dns, tenantId, 'inbound.test');
  await verifiedDomain(domains, dns, tenantId, 'store.test');
  const routes = new InboundRoutes(catalog, TEST_RECORD_SETTINGS);
  await catalog.createWebhook({
    id: 'whk_in',
    tenant_id: tenantId,
    url: receiver.url,
    events: ['email.inbound'],
    secret: SECRET,
  });
  await routes.create(tenantId, { match: 'support@inbound.test' });
  await routes.create(tenantId, { match: '*@store.test', action: 'store' });
  server = inboundServer({
    routes,
    catalog,
    webhooks: webhookDeliveries(runtime),
    intake: bouncesIntake({ invoker: runtime, catalog }),
    unsubscribes: mailtoUnsubscribes(runtime),
    dnsServers: [dns.address],
    hostname: 'gatepost.test',
    publicUrl: () => 'https://gatepost.test',
    log: () => {},
    tls: await submissionTls({ configured: null, dataDir: dir, hostname: 'gatepost.test' }),
    maxBytes: MAX_BYTES,
    spoolDir: join(dir, 'spool'),
    maxClients: 20,
    idleTimeoutMs: 30_000,
  });
  port = (await server.listen(0, '127.0.0.1')).port;
}, 60_000);

afterAll(async () => {
  await server?.drain();
  await drain?.();
  await runtime?.stop();
  await catalog?.close();
  await receiver?.close();
  await dns?.close();
});

const client = () =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    name: 'client.sender.test',
    tls: { rejectUnauthorized: false },
  });

/** One SMTP conversation line by line: each command's whole reply (the last line of a multi-line one). */
async function talk(commands: (string | Buffer)[]): Promise<string[]> {
  const socket: Socket = connect(port, '127.0.0.1');
  let buffered = '';
  const waiting: ((reply: string) => void)[] = [];
  let reply = '';
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    let at: number;
    while ((at = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 2);
      reply += `${line}\n`;
      if (/^\d{3} /.test(line)) {
        waiting.shift()?.(reply.trimEnd());
        reply = '';
      }
    }
  });
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const answers = [await next()];
  for (const command of commands) {
    const answer = next();
    socket.write(typeof command === 'string' ? `${command}\r\n` : command);
    answers.push(await answer);
  }
  socket.end();
  return answers;
}

describe('inbound MX', () => {
  it('announces SIZE and STARTTLS, and no AUTH', async () => {
    const [, ehlo] = await talk(['EHLO client.sender.test', 'QUIT']);
    expect(ehlo).toMatch(new RegExp(`^250[- ]SIZE ${MAX_BYTES}$`, 'm'));
    expect(ehlo).toContain('STARTTLS');
    expect(ehlo).not.toContain('AUTH');
  });

  it('refuses a domain it does not serve as relaying, and an unknown user of one it serves', async () => {
    const answers = await talk([
      'EHLO client.sender.test',
      'MAIL FROM:<alice@sender.test>',
      'RCPT TO:<someone@elsewhere.example>',
      'RCPT TO:<nobody@inbound.test>',
      'RCPT TO:<b+msg_0123@bounces.unknown.test>',
      'QUIT',
    ]);
    expect(answers[3]).toMatch(/^550 5\.7\.1 Relaying denied/);
    expect(answers[4]).toMatch(/^550 5\.1\.1 /);
    expect(answers[5]).toMatch(/^550 5\.7\.1 /);
  });

  it('takes a DKIM-signed message for a route over STARTTLS, keeps it and posts a signed email.inbound with its verdicts', async () => {
    const raw = fixture('aligned.eml');
    const sent = await client().sendMail({ envelope: { from: 'alice@sender.test', to: ['support@inbound.test'] }, raw });
    expect(sent.response).toMatch(/^250 2\.0\.0 Accepted \(inm_/);
    const id = /\((inm_\w+)\)/.exec(sent.response)![1]!;

    const delivery = await eventually(() => receiver.received.find((d) => d.body.includes(id)));
    const event = verifyWebhook<Record<string, any>>({ payload: delivery.body, headers: delivery.headers, secret: SECRET });
    expect(event.type).toBe('email.inbound');
    expect(event.data).toMatchObject({
      id,
      envelope: { mail_from: 'alice@sender.test', rcpt_to: ['support@inbound.test'], remote_address: '127.0.0.1' },
      from: { address: 'alice@sender.test', name: 'Alice' },
      to: [{ address: 'support@inbound.test', name: '' }],
      cc: [{ address: 'team@inbound.test', name: 'Team' }],
      reply_to: [{ address: 'replies@sender.test', name: '' }],
      subject: 'Order 1042: where is it?',
      text: 'Hello, my order has not arrived.\n',
      html: '<p>Hello, my order has <b>not</b> arrived.</p>',
      attachments: [
        {
          filename: 'receipt.txt',
          content_type: 'text/plain',
          size: 18,
          content_id: null,
          url: `https://gatepost.test/v1/inbound/messages/${id}/attachments/0`,
        },
      ],
      raw_url: `https://gatepost.test/v1/inbound/messages/${id}/raw`,
      auth: {
        spf: { result: 'pass', domain: 'sender.test' },
        dkim: [{ result: 'pass', domain: 'sender.test', selector: 's1', aligned: true }],
        dmarc: { result: 'pass', domain: 'sender.test', policy: 'reject' },
      },
    });
    expect(event.data.headers).toContainEqual({ name: 'X-Order', value: '1042' });
    expect(await catalog.inboundRaw(tenantId, id)).toEqual(raw);
    expect((await catalog.inboundAttachment(tenantId, id, 0))!.content.toString()).toBe('Order 1042, paid.\n');
  });

  it('records a forged signature and a softfail as verdicts, not refusals', async () => {
    const sent = await client().sendMail({
      envelope: { from: 'alice@softfail.test', to: ['support@inbound.test'] },
      raw: fixture('forged.eml'),
    });
    const id = /\((inm_\w+)\)/.exec(sent.response)![1]!;
    const stored = await catalog.getInboundMessage(tenantId, id);
    expect(stored!.payload.auth).toMatchObject({
      spf: { result: 'softfail', domain: 'softfail.test' },
      dkim: [{ result: 'neutral', domain: 'sender.test' }],
      dmarc: { result: 'fail' },
    });
  });

  it('refuses a message over the size limit with 552, declared or not, and keeps nothing of it', async () => {
    const before = (await catalog.listInboundMessages(tenantId, { limit: 1000 })).data.length;
    const declared = await talk(['EHLO c.test', `MAIL FROM:<a@sender.test> SIZE=${MAX_BYTES + 1}`, 'QUIT']);
    expect(declared[2]).toMatch(/^552 /);
    const body = Buffer.from(`Subject: big\r\n\r\n${'x'.repeat(998)}\r\n`.repeat(1) + `${'y'.repeat(76)}\r\n`.repeat(1000));
    const answers = await talk([
      'EHLO c.test',
      'MAIL FROM:<a@sender.test>',
      'RCPT TO:<x@store.test>',
      'DATA',
      Buffer.concat([body, Buffer.from('.\r\n')]),
      'QUIT',
    ]);
    expect(answers[4]).toMatch(/^354/);
    expect(answers[5]).toMatch(/^552 5\.3\.4 /);
    expect((await catalog.listInboundMessages(tenantId, { limit: 1000 })).data.length).toBe(before);
  });

  it('keeps a message whose header section never ends, and one of binary garbage, each as received', async () => {
    const noEnd = Buffer.from('Subject: no end\r\nFrom: a@sender.test\r\nX-Trailing: still a header\r\n.\r\n');
    const garbage = Buffer.from(Array.from({ length: 4000 }, (_, i) => [0, 1, 127, 128, 200, 255, 46, 58][i % 8]!));
    const answers = await talk([
      'EHLO c.test',
      'MAIL FROM:<a@sender.test>',
      'RCPT TO:<anything@store.test>',
      'DATA',
      noEnd,
      'MAIL FROM:<>',
      'RCPT TO:<other@store.test>',
      'DATA',
      Buffer.concat([garbage, Buffer.from('\r\n.\r\n')]),
      'QUIT',
    ]);
    expect(answers[5]).toMatch(/^250 2\.0\.0 Accepted \(inm_/);
    expect(answers[9]).toMatch(/^250 2\.0\.0 Accepted \(inm_/);
    const first = await catalog.getInboundMessage(tenantId, /\((inm_\w+)\)/.exec(answers[5]!)![1]!);
    expect(first!.payload).toMatchObject({ subject: 'no end', from: { address: 'a@sender.test' }, text: null });
    const second = /\((inm_\w+)\)/.exec(answers[9]!)![1]!;
    expect(await catalog.getInboundMessage(tenantId, second)).toMatchObject({ mail_from: '', rcpt_to: ['other@store.test'] });
    expect((await catalog.inboundRaw(tenantId, second))!.subarray(0, 4000)).toEqual(garbage);
  });

  it('hands mail for a return-path address to the report intake: kept with the reports, unrecognised here', async () => {
    const answers = await talk([
      'EHLO mx.receiver.test',
      'MAIL FROM:<>',
      'RCPT TO:<b+msg_0123abc@bounces.inbound.test>',
      'DATA',
      'Subject: Undelivered Mail Returned to Sender\r\n\r\nsorry\r\n.',
      'QUIT',
    ]);
    expect(answers[4]).toMatch(/^354/);
    expect(answers[5]).toMatch(/^250 /);
    // No message of the tenant has that id: the report is kept, and says why it was not tied.
    const { data } = await catalog.listReports({ tenant_id: tenantId, limit: 10 });
    expect(data).toEqual([
      expect.objectContaining({ rcpt: 'b+msg_0123abc@bounces.inbound.test', mail_from: '', outcome: 'unrecognised' }),
    ]);
    expect((await catalog.listInboundMessages(tenantId, { limit: 1000 })).data.map((m) => m.rcpt_to)).not.toContainEqual([
      'b+msg_0123abc@bounces.inbound.test',
    ]);
  });
});
