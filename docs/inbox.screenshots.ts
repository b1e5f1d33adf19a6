// Takes docs/inbox-list.png and docs/inbox-message.png: a Gatepost on a fresh data directory,
// a few messages sent with a sandbox key, the inbox signed in to and shown in Debian's Chromium.
// Run once after a change to the inbox's look: node --import tsx docs/inbox.screenshots.ts
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../test/harness/browser.harness.ts';
import { startGatepost } from '../test/harness/gatepost.harness.ts';

const out = (name: string) => fileURLToPath(new URL(name, import.meta.url));

const gp = await startGatepost();
const chromium = await launchChromium();
try {
  const { sandbox } = await gp.tenant();
  const send = (to: string, subject: string, html: string) =>
    gp.request('POST', '/v1/emails', { key: sandbox, body: { to, subject, html, from: 'Shop <orders@shop.example>' } });
  await send('bo@example.com', 'Welcome to the shop, Bo', '<h1>Welcome, Bo</h1><p>Thanks for signing up.</p>');
  await send('cy@example.com', 'Reset your password', '<p>Your code is <b>318 204</b>. It expires in 10 minutes.</p>');
  await send(
    'ann@example.com',
    'Your order #1042 has shipped',
    `<div style="font-family: sans-serif; max-width: 520px">
       <h1 style="color: #2f5bd3">Your order is on its way</h1>
       <p>Hi Ann, order <b>#1042</b> left our warehouse this morning.</p>
       <p><a href="https://shop.example/orders/1042" style="background: #2f5bd3; color: #fff; padding: 8px 14px; border-radius: 6px; text-decoration: none">Track your parcel</a></p>
       <p><img src="https://cdn.shop.example/banner.png" alt="(a remote image, blocked until asked for)" width="480" height="60"></p>
       <p style="color: #666; font-size: 12px">Questions? <a href="mailto:help@shop.example">help@shop.example</a></p>
     </div>`,
  );
  const page = await chromium.context.newPage();
  await page.setViewportSize({ width: 1280, height: 760 });
  await page.goto(`${gp.url}/inbox`);
  await page.fill('#key', sandbox);
  await page.click('form[action="/inbox/session"] button[type="submit"]');
  await page.waitForSelector('#live[data-live="on"]');
  await page.waitForFunction(() => document.querySelectorAll('#messages li').length === 3);
  await page.locator('#messages li').first().locator('button').click();
  await page.frameLocator('iframe[title="Message HTML"]').locator('h1').waitFor();
  await page.screenshot({ path: out('inbox-list.png') });
  await page.locator('.tabs button', { hasText: 'Timeline' }).click();
  await page.locator('.timeline li[data-type="email.sent"]').waitFor();
  await page.locator('.message').screenshot({ path: out('inbox-message.png') });
} finally {
  await chromium.close();
  await gp.dispose();
}
