// Open and click tracking and one-click unsubscribe (issue 24 items 1-4, 8), end to end on a
// started Gatepost (either runtime): a message is sent, its tracked link, pixel and unsubscribe
// URL are found in the message as captured or delivered, each is followed over HTTP, and the
// message's timeline shows what came of it.
import { Client } from '@sendgrid/client';
import { MailService } from '@sendgrid/mail';
import Mailgun from 'mailgun.js';
import { Models } from 'postmark';
import { describe, expect, it, vi } from 'vitest';
import { observe } from '../harness/compat.harness.ts';
import { eventually } from '../harness/gatepost.harness.ts';
import { stylePClient } from '../harness/style-p.harness.ts';
import { submission } from '../harness/submission.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();
const { captured } = observe(suite);

const DESTINATION = 'https://shop.example/sale?item=42&ref=mail';
const HTML = `<html><body><p>Hello</p>
<a href="${DESTINATION.replace('&', '&amp;')}">Sale</a>
<a href="mailto:help@shop.example">Write to us</a>
<a href="#top">Top</a>
<a href="javascript:alert(1)">Script</a>
<a href="{{unsubscribe_url}}">Unsubscribe</a>
</body></html>`;

/** The href of each link in `html`, decoded as a browser would. */
const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
const pixelOf = (html: string) => /<img src="([^"]*\/t\/o\/[^"]*)"/.exec(html)?.[1];

async function send(key: string, body: Record<string, unknown>) {
  const sent = await suite.gp.request('POST', '/v1/emails', { key, body: { subject: 'Tracked', html: HTML, ...body } });
  expect(sent.status).toBe(202);
  return sent.body.id as string;
}

/** The message's timeline once it holds an event of `type` (and `count` of them). */
async function eventsOnceThere(key: string, id: string, type: string, count = 1) {
  return eventually(async () => {
    const { body } = await suite.gp.request('GET', `/v1/messages/${id}`, { key });
    const found = (body.events as { type: string; data: Record<string, unknown> }[]).filter((e) => e.type === type);
    return found.length >= count && found;
  });
}

const captureOf = (key: string, id: string) =>
  eventually(async () => {
    const c = await suite.gp.request('GET', `/v1/sandbox/messages/${id}`, { key });
    return c.status === 200 && c.body;
  });

describe('tracking and unsubscribe', () => {
  it('tracks a broadcast message: click, open and one-click unsubscribe, on the timeline and the suppression list', async () => {
    const { sandbox, live } = suite.tenant;
    const to = `reader-${Date.now()}@example.com`;
    const id = await send(sandbox, { to, stream: 'broadcast' });
    const captured = await captureOf(sandbox, id);

    // The web link goes through Gatepost; mailto, the anchor, javascript: and the unsubscribe link stay.
    const links = hrefs(captured.html);
    const tracked = links.find((l) => l.includes('/t/c/'))!;
    expect(tracked.startsWith(`${suite.gp.url}/t/c/`)).toBe(true);
    expect(links).not.toContain(DESTINATION);
    expect(links).toContain('mailto:help@shop.example');
    expect(links).toContain('#top');
    expect(links).toContain('javascript:alert(1)');
    const unsubscribe = links.find((l) => l.includes('/u/'))!;
    expect(unsubscribe.startsWith(`${suite.gp.url}/u/`)).toBe(true);
    // From a domain Gatepost has no return path for: the https address alone (tracking-host.e2e.test.ts has the mailto one).
    expect(captured.headers['List-Unsubscribe']).toBe(`<${unsubscribe}>`);
    expect(captured.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    // The text part keeps the link the sender wrote.
    expect(captured.text).toContain(DESTINATION);

    const click = await fetch(tracked, { redirect: 'manual', headers: { 'user-agent': 'Reader/1.0' } });
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe(DESTINATION);
    const [clicked] = await eventsOnceThere(sandbox, id, 'email.clicked');
    expect(clicked!.data).toMatchObject({ message_id: id, to, url: DESTINATION, user_agent: 'Reader/1.0' });
    expect(clicked!.data.ip).toEqual(expect.any(String));

    const pixel = pixelOf(captured.html)!;
    const image = await fetch(pixel, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; GoogleImageProxy)' } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/gif');
    expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(0);
    await fetch(pixel, { headers: { 'user-agent': 'Reader/1.0' } });
    const opens = await eventsOnceThere(sandbox, id, 'email.opened', 2);
    expect(opens.map((o) => o.data.first)).toEqual([true, false]);
    // Gmail's image proxy fetching the pixel is marked as a machine's open.
    expect(opens[0]!.data).toMatchObject({ machine: true, user_agent: 'Mozilla/5.0 (compatible; GoogleImageProxy)' });

    // The page asks first and changes nothing; the one-click POST (RFC 8058) unsubscribes.
    const confirm = await fetch(unsubscribe);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('<form method="post"');
    const oneClick = await fetch(unsubscribe, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.status).toBe(200);
    const [unsubscribed] = await eventsOnceThere(sandbox, id, 'email.unsubscribed');
    expect(unsubscribed!.data).toMatchObject({ to, via: 'one_click' });
    const suppression = await eventually(async () => {
      const s = await suite.gp.request('GET', `/v1/suppressions/${encodeURIComponent(to)}`, { key: live });
      return s.status === 200 && s.body;
    });
    expect(suppression).toMatchObject({ address: to, reason: 'unsubscribe' });
    const again = await suite.gp.request('POST', '/v1/emails', {
      key: sandbox,
      body: { to, subject: 'Again', html: '<p>x</p>' },
    });
    expect(again.body.error.code).toBe('recipient_suppressed');
  });

  it('delivers live broadcast mail with its links tracked and the unsubscribe fields in the header', async () => {
    const to = `live-${Date.now()}@example.com`;
    const id = await send(suite.tenant.live, { to, stream: 'broadcast' });
    const received = await eventually(() => suite.relay.received.find((r) => r.to.includes(to)));
    // Header fields unfolded (RFC 5322 §2.2.3).
    const header = String(received.raw)
      .split('\r\n\r\n')[0]!
      .replace(/\r\n[ \t]+/g, ' ');
    expect(header).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
    expect(header).toMatch(/^List-Unsubscribe: <http:\/\/[^>]+\/u\/msg_[^>]+>\r$/m);
    const tracked = hrefs(String(received.parsed.html)).find((l) => l.includes('/t/c/'))!;
    const click = await fetch(tracked, { redirect: 'manual' });
    expect(click.headers.get('location')).toBe(DESTINATION);
    await eventsOnceThere(suite.tenant.live, id, 'email.clicked');
  });

  it('leaves transactional mail alone unless asked, and tracks it when asked', async () => {
    const { sandbox } = suite.tenant;
    const plain = await captureOf(sandbox, await send(sandbox, { to: `plain-${Date.now()}@example.com` }));
    expect(hrefs(plain.html)).toContain(DESTINATION);
    expect(pixelOf(plain.html)).toBeUndefined();
    expect(plain.headers['List-Unsubscribe']).toBeUndefined();
    // {{unsubscribe_url}} is filled on any stream.
    expect(hrefs(plain.html).some((l) => l.startsWith(`${suite.gp.url}/u/`))).toBe(true);

    const asked = await captureOf(
      sandbox,
      await send(sandbox, {
        to: `asked-${Date.now()}@example.com`,
        track_clicks: true,
        track_opens: false,
        list_unsubscribe: true,
      }),
    );
    expect(hrefs(asked.html)).not.toContain(DESTINATION);
    expect(pixelOf(asked.html)).toBeUndefined();
    expect(asked.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
  });
});

describe("the compatibility ingresses' tracking switches, through each provider's official client", () => {
  /** Whether a captured message's html has its link tracked, an open pixel, and the List-Unsubscribe fields. */
  const trackingOf = (c: { html: string; headers: Record<string, string> }) => ({
    clicks: hrefs(c.html).some((l) => l.includes('/t/c/')),
    opens: pixelOf(c.html) !== undefined,
    unsubscribe: c.headers['List-Unsubscribe-Post'] === 'List-Unsubscribe=One-Click',
  });
  const from = 'news@sender.example';

  it('Style P: TrackOpens and TrackLinks (postmark)', async () => {
    const client = stylePClient(suite.gp, suite.tenant.sandbox);
    const on = `p-on-${Date.now()}@example.com`;
    const off = `p-off-${Date.now()}@example.com`;
    await client.sendEmail({
      From: from,
      To: on,
      Subject: 's',
      HtmlBody: HTML,
      TrackOpens: true,
      TrackLinks: Models.LinkTrackingOptions.HtmlOnly,
    });
    await client.sendEmail({
      From: from,
      To: off,
      Subject: 's',
      HtmlBody: HTML,
      MessageStream: 'broadcast',
      TrackOpens: false,
      TrackLinks: Models.LinkTrackingOptions.None,
    });
    expect(trackingOf(await captured(suite.tenant.sandbox, on))).toEqual({ clicks: true, opens: true, unsubscribe: false });
    // The broadcast stream's defaults, switched off by the message: only List-Unsubscribe stays.
    expect(trackingOf(await captured(suite.tenant.sandbox, off))).toEqual({ clicks: false, opens: false, unsubscribe: true });
  });

  it('Style S: tracking_settings (@sendgrid/mail)', async () => {
    const client = new Client();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    client.setApiKey(suite.tenant.sandbox);
    warn.mockRestore();
    client.setDefaultRequest('baseUrl', suite.gp.url);
    const mail = new MailService();
    mail.setClient(client);
    const to = `s-${Date.now()}@example.com`;
    await mail.send({
      from,
      to,
      subject: 's',
      html: HTML,
      trackingSettings: {
        clickTracking: { enable: true },
        openTracking: { enable: false },
        subscriptionTracking: { enable: true },
      },
    });
    expect(trackingOf(await captured(suite.tenant.sandbox, to))).toEqual({ clicks: true, opens: false, unsubscribe: true });
  });

  it('Style M: o:tracking, o:tracking-clicks and o:tracking-opens (mailgun.js)', async () => {
    const client = new Mailgun(FormData).client({ username: 'api', key: suite.tenant.sandbox, url: suite.gp.url });
    const to = `m-${Date.now()}@example.com`;
    await client.messages.create('mg.sender.example', {
      from,
      to,
      subject: 's',
      html: HTML,
      'o:tracking': 'yes',
      'o:tracking-opens': 'no',
    });
    expect(trackingOf(await captured(suite.tenant.sandbox, to))).toEqual({ clicks: true, opens: false, unsubscribe: false });
  });

  it('SMTP submission: X-Gatepost-Stream, X-Gatepost-Track-Opens and X-Gatepost-Track-Clicks (nodemailer)', async () => {
    const smtp = submission(suite.gp, suite.tenant.sandbox);
    const on = `smtp-on-${Date.now()}@example.com`;
    const off = `smtp-off-${Date.now()}@example.com`;
    await smtp.sendMail({
      from,
      to: on,
      subject: 's',
      html: HTML,
      headers: { 'X-Gatepost-Track-Opens': 'true', 'X-Gatepost-Track-Clicks': 'true' },
    });
    await smtp.sendMail({
      from,
      to: off,
      subject: 's',
      html: HTML,
      headers: { 'X-Gatepost-Stream': 'broadcast', 'X-Gatepost-Track-Opens': 'false', 'X-Gatepost-Track-Clicks': 'false' },
    });
    const tracked = await captured(suite.tenant.sandbox, on);
    expect(trackingOf(tracked)).toEqual({ clicks: true, opens: true, unsubscribe: false });
    // The switches are Gatepost's to take, not headers to send on.
    expect(Object.keys(tracked.headers).filter((h) => /^x-gatepost-/i.test(h))).toEqual([]);
    expect(trackingOf(await captured(suite.tenant.sandbox, off))).toEqual({ clicks: false, opens: false, unsubscribe: true });
  });

  it('SMTP submission: a switch with a value it cannot take refuses the message, naming the header', async () => {
    const to = `smtp-bad-${Date.now()}@example.com`;
    const refused = await submission(suite.gp, suite.tenant.sandbox)
      .sendMail({ from, to, subject: 's', html: HTML, headers: { 'X-Gatepost-Track-Opens': 'sometimes' } })
      .then(
        () => null,
        (e: { responseCode?: number; response?: string }) => e,
      );
    expect(refused?.responseCode).toBe(501);
    expect(refused?.response).toContain('X-Gatepost-Track-Opens');
  });
});

describe('bad tracking input', () => {
  it('answers a tampered, truncated or unknown click token with a plain 404 page, never a redirect', async () => {
    const { sandbox } = suite.tenant;
    const id = await send(sandbox, { to: `bad-${Date.now()}@example.com`, stream: 'broadcast' });
    const tracked = hrefs((await captureOf(sandbox, id)).html).find((l) => l.includes('/t/c/'))!;
    const [base, token] = tracked.split('/t/c/') as [string, string];
    const [messageId, url, mac] = token.split('.') as [string, string, string];
    const elsewhere = Buffer.from('https://evil.example/').toString('base64url');
    const javascript = Buffer.from('javascript:alert(1)').toString('base64url');
    const otherMessage = `msg_${'0'.repeat(26)}`;
    for (const bad of [
      `${messageId}.${elsewhere}.${mac}`, // another destination under the same signature
      `${messageId}.${javascript}.${mac}`,
      `${messageId}.${url}.${mac.slice(1)}`, // wrong length
      `${messageId}.${url}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`, // wrong signature
      `${otherMessage}.${url}.${mac}`, // unknown message
      'nonsense',
    ]) {
      const answer = await fetch(`${base}/t/c/${bad}`, { redirect: 'manual' });
      expect(answer.status, bad).toBe(404);
      expect(answer.headers.get('location')).toBeNull();
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await answer.text()).toContain('Link not found');
    }
    // A forged open token still gets the image, and records nothing.
    const pixel = await fetch(`${base}/t/o/${messageId}.${mac}`);
    expect(pixel.headers.get('content-type')).toBe('image/gif');
    const forged = await fetch(`${base}/u/${messageId}.${mac}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(forged.status).toBe(404);
  });

  it('records a replayed unsubscribe once, and answers it as done', async () => {
    const { sandbox } = suite.tenant;
    const id = await send(sandbox, { to: `twice-${Date.now()}@example.com`, stream: 'broadcast' });
    const unsubscribe = hrefs((await captureOf(sandbox, id)).html).find((l) => l.includes('/u/'))!;
    const post = (path: string) =>
      fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
    expect((await post(unsubscribe)).status).toBe(200);
    expect((await post(`${unsubscribe}?via=page`)).status).toBe(200);
    // A click after both shows the timeline is up to date: still one unsubscribe.
    const tracked = hrefs((await captureOf(sandbox, id)).html).find((l) => l.includes('/t/c/'))!;
    await fetch(tracked, { redirect: 'manual' });
    await eventsOnceThere(sandbox, id, 'email.clicked');
    expect(await eventsOnceThere(sandbox, id, 'email.unsubscribed')).toHaveLength(1);
  });

  it('records at most 100 opens and clicks of a message, and still answers every one', async () => {
    const { sandbox } = suite.tenant;
    const id = await send(sandbox, { to: `often-${Date.now()}@example.com`, stream: 'broadcast' });
    const html = (await captureOf(sandbox, id)).html;
    for (let i = 0; i < 101; i++) expect((await fetch(pixelOf(html)!)).headers.get('content-type')).toBe('image/gif');
    const click = await fetch(
      hrefs(html).find((l) => l.includes('/t/c/'))!,
      { redirect: 'manual' },
    );
    expect(click.headers.get('location')).toBe(DESTINATION);
    // A click on another message after them: opens and clicks are recorded in groups published
    // in the order their hits came, so once this one is on its timeline, every hit before it is
    // recorded, or was never going to be.
    const marker = await send(sandbox, { to: `marker-${Date.now()}@example.com`, stream: 'broadcast' });
    await fetch(
      hrefs((await captureOf(sandbox, marker)).html).find((l) => l.includes('/t/c/'))!,
      { redirect: 'manual' },
    );
    await eventsOnceThere(sandbox, marker, 'email.clicked');
    const { body } = await suite.gp.request('GET', `/v1/messages/${id}`, { key: sandbox });
    const types = (body.events as { type: string }[]).map((e) => e.type);
    expect(types.filter((t) => t === 'email.opened')).toHaveLength(100);
    expect(types).not.toContain('email.clicked');
  });

  it('records every click of a burst on one message, each once, in order on its timeline', async () => {
    const { sandbox } = suite.tenant;
    const id = await send(sandbox, { to: `burst-${Date.now()}@example.com`, stream: 'broadcast' });
    const tracked = hrefs((await captureOf(sandbox, id)).html).find((l) => l.includes('/t/c/'))!;
    // As many at once as a message records, each from a reader of its own.
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, n) => fetch(tracked, { redirect: 'manual', headers: { 'user-agent': `Reader/${n}` } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(302));
    const clicks = await eventsOnceThere(sandbox, id, 'email.clicked', 100);
    expect(clicks).toHaveLength(100);
    expect(new Set(clicks.map((c) => c.data.user_agent)).size).toBe(100);
    expect(new Set(clicks.map((c) => (c as unknown as { id: string }).id)).size).toBe(100);
    expect(clicks.every((c) => c.data.url === DESTINATION && c.data.message_id === id)).toBe(true);
    // The timeline is in time order, the clicks after the message was captured.
    const { body } = await suite.gp.request('GET', `/v1/messages/${id}`, { key: sandbox });
    const times = (body.events as { created_at: string }[]).map((e) => e.created_at);
    expect(times).toEqual([...times].sort());
    expect((body.events as { type: string }[]).findIndex((e) => e.type === 'email.sent')).toBeLessThan(
      (body.events as { type: string }[]).findIndex((e) => e.type === 'email.clicked'),
    );
  });
});
