// The build, as the image runs it: `npm run build`, then `node dist/main.js` (no TypeScript
// loader) on an empty data directory, as the Dockerfile's final stage does. Every worker thread
// must load its compiled .js: a send commits (the writer and checkpointer threads), a sandbox
// send is captured and indexed for the inbox's search (the capture writer's thread), an SMTP
// submission is parsed (the parser's), a live send is composed and DKIM-signed for its MX host
// (the outgoing thread's), received mail gets its verdicts (the inbound reader's); the capture
// inbox's page assets and the docs' pages (dist/docs/) are copied beside it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_RUNTIME, eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { submission } from '../harness/submission.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { publishSenders, receiveInbound } from '../harness/inbound.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// The image is the embedded start; the Dapr topology runs the sources (dapr/cluster).
describe.skipIf(TEST_RUNTIME === 'dapr')('the build: node dist/main.js', () => {
  let gp: GatepostProcess;
  let dns: DnsServer;
  let mx: MxHost;
  let sandboxKey = '';
  let liveKey = '';

  beforeAll(async () => {
    const port = await freePort();
    mx = await startMx('127.0.0.2', port);
    dns = await startDns({ 'ok.test': { MX: [{ exchange: 'mx.ok.test', priority: 10 }] }, 'mx.ok.test': { A: [mx.ip] } });
    publishSenders(dns);
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: ROOT });
    // No admin token: the keys are the ones a first start prints, as a person trying it out sees them.
    gp = await startGatepost({
      compiled: true,
      env: { GATEPOST_ADMIN_TOKEN: '', GATEPOST_DNS_SERVERS: dns.address, GATEPOST_MX_PORT: String(port) },
    });
    sandboxKey = /sandbox key: (gp_sandbox_\S+)/.exec(gp.output)?.[1] ?? '';
    liveKey = /live key: +(gp_live_\S+)/.exec(gp.output)?.[1] ?? '';
  }, 180_000);
  afterAll(async () => {
    await gp?.dispose();
    await mx?.close();
    await dns?.close();
  });

  const captured = (id: string) =>
    eventually(async () => {
      const inbox = await gp.request('GET', '/v1/sandbox/messages', { key: sandboxKey });
      return JSON.stringify(inbox.body).includes(id);
    });

  it('answers /healthz and captures a sandbox send with the key its first start printed', async () => {
    expect(sandboxKey).not.toBe('');
    expect((await gp.request('GET', '/healthz')).status).toBe(200);
    const sent = await gp.request('POST', '/v1/emails', {
      key: sandboxKey,
      body: {
        from: 'me@sender.example',
        to: 'ann@example.com',
        subject: 'Hello {{name}}',
        html: '<p>Hi</p>',
        data: { name: 'Ann' },
      },
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ status: 'queued', sandbox: true });
    expect(await captured(sent.body.id)).toBe(true);
  });

  it('parses an SMTP submission on its compiled worker thread', async () => {
    const info = await submission(gp, sandboxKey).sendMail({
      from: 'me@sender.example',
      to: 'bob@example.com',
      subject: 'By SMTP',
      text: 'Hello',
    });
    const id = /msg_[0-9a-z]{26}/.exec(info.response)?.[0] ?? '';
    expect(id).not.toBe('');
    expect(await captured(id)).toBe(true);
  });

  it('delivers a live send to its MX host, DKIM-signed on its compiled outgoing thread', async () => {
    expect(liveKey).not.toBe('');
    await verifiedDomainOver(gp, dns, liveKey, 'sender.example');
    const sent = await gp.request('POST', '/v1/emails', {
      key: liveKey,
      body: { from: 'me@sender.example', to: 'bob@ok.test', subject: 'Live from the build', html: '<p>Hi</p>' },
    });
    expect(sent.status).toBe(202);
    const arrived = await eventually(() => mx.received.find((m) => m.parsed.subject === 'Live from the build'));
    expect(arrived.parsed.headers.get('dkim-signature')).toBeDefined();
  });

  it('reads received mail on its compiled reader thread: verdicts with the message', async () => {
    const { id } = await receiveInbound(gp, dns, liveKey, 'inbound.test');
    const read = await gp.request('GET', `/v1/inbound/messages/${id}`, { key: liveKey });
    expect(read.status).toBe(200);
    expect(read.body.auth.dkim).toMatchObject([{ result: 'pass', domain: 'sender.test' }]);
  });

  it('serves the docs the build copied beside it (dist/docs/)', async () => {
    const page = await gp.request('GET', '/docs/errors');
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain('<h1 id="errors">Errors</h1>');
    expect((await gp.request('GET', '/docs/errors.md')).status).toBe(200);
    expect(String((await gp.request('GET', '/llms.txt')).body)).toContain('](/docs/errors.md)');
  });

  it("serves the capture inbox's assets copied beside it, and searches what its writer thread indexed", async () => {
    const script = await fetch(`${gp.url}/inbox/assets/inbox.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    const signIn = await fetch(`${gp.url}/inbox/session`, {
      method: 'POST',
      body: new URLSearchParams({ key: sandboxKey }),
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const found = await fetch(`${gp.url}/inbox/api/messages?scope=tenant&q=by%20smtp`, { headers: { cookie } });
    expect(((await found.json()) as { data: { subject: string }[] }).data.map((m) => m.subject)).toEqual(['By SMTP']);
  });

  it('drains on SIGTERM and exits 0, every thread closed', async () => {
    expect(await gp.stop()).toBe(0);
  });
});
