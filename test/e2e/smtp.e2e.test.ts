// SMTP submission end to end: nodemailer and swaks, as they are, against Gatepost's submission
// port; the mail that reaches a real relay, the timeline, the capture inbox, and the precise
// reply to each refusal, with nothing half-accepted.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { observe, uniqueAddress as unique } from '../harness/compat.harness.ts';
import { TEST_RUNTIME, eventually, startGatepost, tempDir } from '../harness/gatepost.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';
import { dialog, selfSignedCert, submission } from '../harness/submission.harness.ts';

const suite = gatepostWithRelay();

const idsIn = (reply: string) => reply.match(/msg_[0-9a-z]{26}/g) ?? [];
const { receivedFor } = observe(suite);

/** Whether a new connection to the port on loopback is refused (one accepted is closed again). */
const connectionRefused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

/** How many mails reached the relay for each address, once a later mail has arrived (so a stray one would have too). */
async function deliveriesTo(...addresses: string[]): Promise<number[]> {
  await laterMailArrived(suite);
  return addresses.map((a) => suite.relay.received.filter((r) => r.to.includes(a)).length);
}

/** What nodemailer rejected with: the server's reply. */
async function refusal(sending: Promise<unknown>): Promise<{ responseCode: number; response: string }> {
  const error = await sending.then(
    () => null,
    (e: { responseCode: number; response: string }) => e,
  );
  if (!error) throw new Error('the send was accepted');
  return error;
}

const authPlain = (key: string) => `AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}`;

describe('SMTP submission', () => {
  it('delivers over STARTTLS with a live key: the headers, body and Cc the sender wrote, one message per recipient', async () => {
    const ann = unique('ann');
    const carl = unique('carl');
    const info = await submission(suite.gp, suite.tenant.live).sendMail({
      from: 'Zoë Sender <zoe@sender.example>',
      to: `Ann Reader <${ann}>`,
      cc: carl,
      replyTo: 'help@sender.example',
      subject: 'Grüße {{name}} ✓',
      html: '<h1>Hello</h1><p>{{name}} stays as written</p>',
      text: 'Hello, as text',
      headers: { 'X-Campaign': 'welcome-42' },
    });
    expect(info.accepted).toEqual([ann, carl]);
    expect(info.response).toMatch(/^250 2\.0\.0 Queued 2 messages: msg_/);
    const [annId, carlId] = idsIn(info.response);

    for (const [address, id] of [
      [ann, annId],
      [carl, carlId],
    ] as const) {
      const mail = await receivedFor(address);
      // The envelope decides: this message is this recipient's alone; the headers are the sender's.
      expect(mail.to).toEqual([address]);
      expect(mail.messageId).toBe(`<${id}@sender.example>`);
      expect(mail.parsed.from?.value[0]).toEqual({ name: 'Zoë Sender', address: 'zoe@sender.example' });
      expect(mail.parsed.to).toMatchObject({ value: [{ name: 'Ann Reader', address: ann }] });
      expect(mail.parsed.cc).toMatchObject({ value: [{ address: carl }] });
      expect(mail.parsed.replyTo?.value[0]?.address).toBe('help@sender.example');
      expect(mail.parsed.subject).toBe('Grüße {{name}} ✓');
      expect(mail.parsed.html).toContain('<h1>Hello</h1><p>{{name}} stays as written</p>');
      expect(mail.parsed.text?.trim()).toBe('Hello, as text');
      expect(mail.parsed.headers.get('x-campaign')).toBe('welcome-42');
    }
    expect(await deliveriesTo(ann, carl)).toEqual([1, 1]);

    const timeline = await eventually(async () => {
      const t = await suite.gp.request('GET', `/v1/messages/${annId}`, { key: suite.tenant.live });
      return t.body.status === 'sent' ? t : undefined;
    });
    expect(timeline.body).toMatchObject({ to: ann, idempotency_key: `smtp:${info.messageId}:${ann}` });
    expect(timeline.body.events.map((e: { type: string }) => e.type)).toEqual([
      'message.accepted',
      'message.queued',
      'email.sent',
    ]);
    expect(timeline.body.events[0].data).toMatchObject({ ingress: 'smtp', to: ann, sandbox: false });
  });

  it('gives To, Cc and Bcc recipients one message each, and shows no Bcc', async () => {
    const [a, b, c, hidden] = ['a', 'b', 'c', 'hidden'].map(unique) as [string, string, string, string];
    const info = await submission(suite.gp, suite.tenant.live).sendMail({
      from: 'app@sender.example',
      to: [a, b],
      cc: c,
      bcc: hidden,
      subject: 'Four',
      html: '<p>four</p>',
    });
    expect(idsIn(info.response)).toHaveLength(4);
    expect(await Promise.all([a, b, c, hidden].map(receivedFor))).toHaveLength(4);
    expect(await deliveriesTo(a, b, c, hidden)).toEqual([1, 1, 1, 1]);
    const secret = (await receivedFor(hidden))!;
    expect(secret.to).toEqual([hidden]);
    expect(secret.parsed.to).toMatchObject({ value: [{ address: a }, { address: b }] });
    expect(secret.parsed.bcc).toBeUndefined();
    expect(secret.raw).not.toContain(hidden);
  });

  it('sends text-only mail with an html part made from the text, escaped, placeholders untouched', async () => {
    const to = unique('text');
    const text = 'Line one\n\n<b>not bold</b> & {{kept}} https://example.com/x';
    await submission(suite.gp, suite.tenant.live).sendMail({ from: 'app@sender.example', to, subject: 'Text', text });
    const mail = await receivedFor(to);
    expect(mail.parsed.text?.trim()).toBe(text);
    // The text as the client sent it (nodemailer ends it with a line break), escaped, line breaks kept.
    expect(mail.parsed.html).toContain(
      '<div style="white-space: pre-wrap">Line one\n\n&lt;b&gt;not bold&lt;/b&gt; &amp; {{kept}} https://example.com/x\n</div>',
    );
    expect(mail.parsed.html).not.toContain('<b>');
  });

  it('captures what a sandbox key sends, and nothing reaches the relay', async () => {
    const to = unique('sandbox');
    const info = await submission(suite.gp, suite.tenant.sandbox).sendMail({
      from: 'app@sender.example',
      to,
      subject: 'Captured',
      html: '<p>captured</p>',
    });
    const [id] = idsIn(info.response);
    const captured = await eventually(async () => {
      const c = await suite.gp.request('GET', `/v1/sandbox/messages/${id}`, { key: suite.tenant.sandbox });
      return c.status === 200 ? c : undefined;
    });
    expect(captured.body).toMatchObject({ to, subject: 'Captured' });
    expect(captured.body.html).toContain('<p>captured</p>');
    expect(await deliveriesTo(to)).toEqual([0]);
  });

  it('sends each recipient a message once when the client resends it with the same Message-ID', async () => {
    const to = unique('again');
    const message = { from: 'app@sender.example', to, subject: 'Once', html: '<p>once</p>', messageId: `<${to}>` };
    const first = await submission(suite.gp, suite.tenant.live).sendMail(message);
    const second = await submission(suite.gp, suite.tenant.live).sendMail(message);
    expect(second.response).toBe(`250 2.0.0 Already queued as ${idsIn(first.response)[0]} (the same Message-ID was sent before)`);
    // Several recipients are one batch, which a resend continues.
    const both = { ...message, to: [unique('again-a'), unique('again-b')], messageId: `<both-${to}>` };
    const firstBoth = await submission(suite.gp, suite.tenant.live).sendMail(both);
    const secondBoth = await submission(suite.gp, suite.tenant.live).sendMail(both);
    expect(secondBoth.response).toBe(
      `250 2.0.0 Already queued 2 messages: ${idsIn(firstBoth.response).join(' ')} (the same Message-ID was sent before)`,
    );
    await Promise.all([to, ...both.to].map(receivedFor));
    expect(await deliveriesTo(to, ...both.to)).toEqual([1, 1, 1]);
    const changed = await refusal(submission(suite.gp, suite.tenant.live).sendMail({ ...message, subject: 'Other' }));
    expect(changed.response).toMatch(/^554 5\.5\.0 A message with this Message-ID was already sent/);
  });

  it('refuses an unknown key with 535 5.7.8 and a public key with 550 5.7.1', async () => {
    const bad = await refusal(submission(suite.gp, 'gp_live_nope').verify());
    expect(bad).toMatchObject({ responseCode: 535 });
    expect(bad.response).toBe('535 5.7.8 The API key is unknown or has been revoked.');
    const browser = await refusal(submission(suite.gp, suite.tenant.publicKey).verify());
    expect(browser.response).toMatch(/^550 5\.7\.1 A public key \(gp_public_\) only works with the browser SDK/);
  });

  it('asks for AUTH before MAIL FROM', async () => {
    const d = await dialog(suite.gp.smtpPort);
    await d.say('EHLO client.test');
    expect(await d.say('MAIL FROM:<app@sender.example>')).toMatch(/^530 5\.7\.0 Authenticate first: AUTH PLAIN or LOGIN/);
    d.close();
  });

  // On Dapr the RCPT TO check waits on PostgreSQL's suppression list, so MAIL's reply leaves
  // before it; on the embedded catalog it answers within the same turn.
  it.skipIf(TEST_RUNTIME === 'dapr')(
    'answers a pipelined MAIL, RCPT and DATA in one write, and queues the message that follows',
    async () => {
      const d = await dialog(suite.gp.smtpPort);
      expect(await d.say('EHLO client.test')).toMatch(/^250-PIPELINING$/m);
      expect(await d.say(authPlain(suite.tenant.sandbox))).toMatch(/^235 /);
      const before = d.chunks.length;
      const to = unique('pipelined');
      d.send(`MAIL FROM:<app@sender.example>\r\nRCPT TO:<${to}>\r\nDATA`);
      expect([await d.read(), await d.read(), await d.read()].map((r) => r.slice(0, 3))).toEqual(['250', '250', '354']);
      // RFC 2920 lets a server answer a pipelined group as it likes; one segment spares two writes.
      expect(d.chunks.slice(before)).toHaveLength(1);
      expect(await d.say(`From: app@sender.example\r\nTo: ${to}\r\nSubject: Pipelined\r\n\r\nHello\r\n.`)).toMatch(
        /^250 2\.0\.0 Queued as msg_/,
      );
      d.close();
    },
  );

  it('closes a connection at its third failed AUTH: of 300 wrong AUTH PLAIN sent at once, two are answered', async () => {
    const d = await dialog(suite.gp.smtpPort);
    await d.say('EHLO client.test');
    const before = d.chunks.length;
    d.send(Array.from({ length: 300 }, () => authPlain('gp_live_nope')).join('\r\n'));
    await d.closed;
    expect(d.chunks.slice(before).join('').trimEnd().split('\r\n')).toEqual([
      '535 5.7.8 The API key is unknown or has been revoked.',
      '535 5.7.8 The API key is unknown or has been revoked.',
      '421 4.7.0 Too many failed authentications on this connection; closing it.',
    ]);
  });

  it('accepts AUTH without TLS on loopback', async () => {
    const to = unique('loopback');
    const info = await submission(suite.gp, suite.tenant.sandbox, { requireTLS: false, ignoreTLS: true }).sendMail({
      from: 'app@sender.example',
      to,
      subject: 'Plain',
      text: 'plain',
    });
    expect(info.response).toMatch(/^250 2\.0\.0 Queued as msg_/);
  });

  // Inside a network namespace of its own, so the non-loopback address never leaves the machine.
  // Embedded-only: the probe starts its own Gatepost in that namespace, where the Dapr topology's
  // Redis and PostgreSQL (on the machine's loopback) cannot be reached. What it checks is the
  // SMTP ingress's AUTH policy, which is the same code on both runtimes.
  const netns = spawnSync('unshare', ['-n', 'ip', 'link', 'set', 'lo', 'up']).status === 0;
  it.skipIf(!netns || TEST_RUNTIME === 'dapr')(
    'neither offers nor takes AUTH without TLS from an address that is not loopback, and takes it over STARTTLS',
    async () => {
      const probe = spawn(
        'unshare',
        [
          '-n',
          'sh',
          '-c',
          'ip link set lo up && ip addr add 192.0.2.1/32 dev lo && exec "$0" --import tsx test/e2e/smtp.netns.probe.ts',
          process.execPath,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      probe.stdout.on('data', (c: Buffer) => (out += c));
      probe.stderr.on('data', (c: Buffer) => (out += c));
      const code = await new Promise((resolve) => probe.on('exit', resolve));
      expect(code, out).toBe(0);
      const seen = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, string>;
      expect(seen.ehlo).toMatch(/^250[ -]STARTTLS$/m);
      expect(seen.ehlo).not.toContain('AUTH');
      // Refused at once: AUTH LOGIN does not ask for the user name and password first.
      expect(seen.authPlain).toMatch(/^500 /);
      expect(seen.authLogin).toMatch(/^500 /);
      expect(seen.mail).toBe(
        '530 5.7.0 Must issue a STARTTLS command first: AUTH is offered over TLS (without it on loopback only), and a message needs AUTH.',
      );
      expect(seen.sent).toMatch(/^250 2\.0\.0 Queued as msg_/);
    },
  );

  it('refuses a message with an attachment for every recipient, with 554 5.6.0', async () => {
    const [a, b] = [unique('att-a'), unique('att-b')];
    const refused = await refusal(
      submission(suite.gp, suite.tenant.live).sendMail({
        from: 'app@sender.example',
        to: [a, b],
        subject: 'Attached',
        text: 'see attached',
        attachments: [{ filename: 'report.txt', content: 'numbers' }],
      }),
    );
    expect(refused.response).toBe('554 5.6.0 Attachments are not supported; the message was not sent.');
    expect(await deliveriesTo(a, b)).toEqual([0, 0]);
  });

  it('refuses a suppressed recipient at RCPT TO with 550 5.1.1, and sends the others', async () => {
    const t = await suite.gp.tenant();
    const [gone, ok] = [unique('gone'), unique('ok')];
    expect((await suite.gp.request('POST', '/v1/suppressions', { key: t.live, body: { address: gone } })).status).toBe(201);
    // RCPT TO reads the suppression list, which follows a change a moment later.
    await eventually(async () => (await suite.gp.request('GET', '/v1/suppressions', { key: t.live })).body.data.length === 1);
    const info = await submission(suite.gp, t.live).sendMail({
      from: 'app@sender.example',
      to: [ok, gone],
      subject: 'S',
      text: 's',
    });
    expect(info.accepted).toEqual([ok]);
    expect(info.rejected).toEqual([gone]);
    expect((info as unknown as { rejectedErrors: { response: string }[] }).rejectedErrors[0]!.response).toBe(
      `550 5.1.1 ${gone} is suppressed (manual); nothing is sent to it.`,
    );
    await receivedFor(ok);
    expect(await deliveriesTo(ok, gone)).toEqual([1, 0]);
  });

  it('refuses the whole message when a recipient is suppressed between RCPT TO and DATA', async () => {
    const t = await suite.gp.tenant();
    const [victim, other] = [unique('victim'), unique('other')];
    const d = await dialog(suite.gp.smtpPort);
    await d.say('EHLO client.test');
    expect(await d.say(authPlain(t.live))).toMatch(/^235 /);
    expect(await d.say('MAIL FROM:<app@sender.example>')).toMatch(/^250 /);
    expect(await d.say(`RCPT TO:<${other}>`)).toMatch(/^250 /);
    expect(await d.say(`RCPT TO:<${victim}>`)).toMatch(/^250 /);
    expect((await suite.gp.request('POST', '/v1/suppressions', { key: t.live, body: { address: victim } })).status).toBe(201);
    expect(await d.say('DATA')).toMatch(/^354 /);
    d.send(`From: app@sender.example\r\nTo: ${other}, ${victim}\r\nSubject: Late\r\n\r\nlate`);
    expect(await d.say('.')).toBe(`550 5.1.1 ${victim} is suppressed (manual); the message was not sent.`);
    d.close();
    expect(await deliveriesTo(other, victim)).toEqual([0, 0]);
  });

  it('refuses the whole message over the daily quota with 452 4.5.3', async () => {
    const t = await suite.gp.tenant({ quota: { per_day: 2 } });
    const to = ['q1', 'q2', 'q3'].map(unique);
    const refused = await refusal(
      submission(suite.gp, t.live).sendMail({ from: 'app@sender.example', to, subject: 'Q', text: 'q' }),
    );
    expect(refused).toMatchObject({ responseCode: 452 });
    expect(refused.response).toBe('452 4.5.3 The daily quota of 2 sends is used up; it resets at 00:00 UTC.');
    expect(await deliveriesTo(...to)).toEqual([0, 0, 0]);
  });

  it('announces SIZE and refuses a larger message with 552 5.3.4', async () => {
    const to = unique('big');
    const transport = submission(suite.gp, suite.tenant.live);
    await transport.verify();
    const refused = await refusal(
      transport.sendMail({ from: 'app@sender.example', to, subject: 'Big', text: 'x'.repeat(11 * 1024 * 1024) }),
    );
    expect(refused.response).toBe('552 5.3.4 The message is over 10485760 bytes, the SIZE this server accepts.');
    expect(await deliveriesTo(to)).toEqual([0]);

    // A client that declares its size is refused before it sends the message.
    const d = await dialog(suite.gp.smtpPort);
    expect(await d.say('EHLO client.test')).toMatch(/^250[ -]SIZE 10485760$/m);
    await d.say(authPlain(suite.tenant.live));
    expect(await d.say('MAIL FROM:<app@sender.example> SIZE=20000000')).toMatch(/^552 /);
    d.close();
  });

  it('refuses headers Gatepost does not send on, naming them', async () => {
    const to = unique('reply');
    const refused = await refusal(
      submission(suite.gp, suite.tenant.live).sendMail({
        from: 'app@sender.example',
        to,
        subject: 'Re: thread',
        text: 'a reply',
        inReplyTo: '<earlier@sender.example>',
      }),
    );
    expect(refused.response).toMatch(/^501 5\.5\.4 The request is invalid: headers\.In-Reply-To set by Gatepost/);
    expect(await deliveriesTo(to)).toEqual([0]);
  });

  it('works with swaks as it is', async () => {
    const to = unique('swaks');
    const ca = join(tempDir('swaks'), 'gatepost.pem');
    writeFileSync(ca, selfSignedCert(suite.gp));
    const swaks = (key: string) =>
      new Promise<{ code: number; out: string }>((resolve) =>
        execFile(
          'swaks',
          ['--server', '127.0.0.1', '--port', String(suite.gp.smtpPort), '-tls', '--tls-verify', '--tls-ca-path', ca]
            .concat(['--auth', 'LOGIN', '--auth-user', 'app', '--auth-password', key])
            .concat(['--from', 'app@sender.example', '--to', to, '--header', 'Subject: From swaks', '--body', 'Sent by swaks']),
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, out: stdout + stderr }),
        ),
      );
    const sent = await swaks(suite.tenant.live);
    expect(sent.code, sent.out).toBe(0);
    expect(sent.out).toMatch(/<~ {2}250 2\.0\.0 Queued as msg_/);
    const mail = await receivedFor(to);
    expect(mail.parsed.subject).toBe('From swaks');
    expect(mail.parsed.text?.trim()).toBe('Sent by swaks');
    expect(mail.parsed.headers.get('x-mailer')).toMatch(/swaks/);

    const refused = await swaks('gp_live_nope');
    expect(refused.code).not.toBe(0);
    expect(refused.out).toContain('535 5.7.8 The API key is unknown or has been revoked.');
  });
});

describe('SMTP submission limits', () => {
  it('refuses an address that failed AUTH too often, until its window ends', async () => {
    const gp = await startGatepost({ env: { GATEPOST_SMTP_AUTH_FAILURES_PER_ADDRESS: '4' } });
    try {
      const t = await gp.tenant();
      const first = await dialog(gp.smtpPort);
      await first.say('EHLO client.test');
      for (const _ of [1, 2]) expect(await first.say(authPlain('gp_live_nope'))).toMatch(/^535 /);
      expect(await first.say(authPlain('gp_live_nope'))).toMatch(
        /^421 4\.7\.0 Too many failed authentications on this connection/,
      );
      await first.closed;
      // The fourth failure from 127.0.0.1 closes the address: the right key no longer helps.
      const second = await dialog(gp.smtpPort);
      await second.say('EHLO client.test');
      expect(await second.say(authPlain('gp_live_nope'))).toBe(
        '421 4.7.0 Too many failed authentications from this address; try again in 15 minutes.',
      );
      await second.closed;
      const third = await dialog(gp.smtpPort);
      expect(third.chunks.join('')).toMatch(/^421 4\.7\.0 Too many failed authentications from this address/);
      await third.closed;
      await expect(submission(gp, t.sandbox).verify()).rejects.toMatchObject({ responseCode: 421 });
    } finally {
      await gp.dispose();
    }
  });

  it('answers a client over GATEPOST_SMTP_MAX_CLIENTS 421, and closes an idle one after GATEPOST_SMTP_IDLE_TIMEOUT', async () => {
    const gp = await startGatepost({ env: { GATEPOST_SMTP_MAX_CLIENTS: '2', GATEPOST_SMTP_IDLE_TIMEOUT: '2s' } });
    try {
      const [a, b] = [await dialog(gp.smtpPort), await dialog(gp.smtpPort)];
      const over = await dialog(gp.smtpPort);
      expect(over.chunks.join('')).toMatch(/^421 .*Too many connected clients/);
      await over.closed;
      // Neither a nor b says a word: the server hangs up on both.
      expect(await a.read()).toMatch(/^421 .*Timeout - closing connection/);
      expect(await b.read()).toMatch(/^421 .*Timeout - closing connection/);
      await Promise.all([a.closed, b.closed]);
      // Their places are free again.
      const c = await dialog(gp.smtpPort);
      expect(await c.say('EHLO client.test')).toMatch(/^250 /m);
      c.close();
    } finally {
      await gp.dispose();
    }
  });
});

describe('SMTP submission while Gatepost drains', () => {
  it('finishes the message under way, then says 421 and exits 0; the message survives the restart', async () => {
    const gp = await startGatepost();
    try {
      const t = await gp.tenant();
      const d = await dialog(gp.smtpPort);
      await d.say('EHLO client.test');
      await d.say(authPlain(t.sandbox));
      await d.say('MAIL FROM:<app@sender.example>');
      await d.say('RCPT TO:<drain@example.com>');
      expect(await d.say('DATA')).toMatch(/^354 /);
      d.send('From: app@sender.example\r\nTo: drain@example.com\r\nSubject: Drain\r\n\r\nunder way');
      const exit = gp.stop();
      // The drain has begun once the port refuses new connections.
      await eventually(() => connectionRefused(gp.smtpPort));
      const queued = await d.say('.');
      expect(queued).toMatch(/^250 2\.0\.0 Queued as msg_/);
      expect(await d.read()).toBe('421 4.3.2 Gatepost is shutting down; try again shortly.');
      expect(await exit).toBe(0);
      d.close();

      await gp.start();
      const [id] = idsIn(queued);
      expect((await gp.request('GET', `/v1/messages/${id}`, { key: t.sandbox })).body).toMatchObject({
        id,
        to: 'drain@example.com',
      });
    } finally {
      await gp.dispose();
    }
  });
});
