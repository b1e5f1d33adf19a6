// The browser bundle as a page uses it: built by its own build script (build.mjs), served from a
// page's origin, imported by that page in Debian's Chromium, and sending through a started
// Gatepost with a public key. What each test asserts is what the page's code sees, and the message
// in the sandbox inbox.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage, startPageServer, type Chromium, type PageServer } from '../../test/harness/browser.harness.ts';
import { eventually } from '../../test/harness/gatepost.harness.ts';
import { gatepostForSdk } from '../../test/harness/sdk.harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'sdk/browser/package.json'), 'utf8'));
const built = join(ROOT, '.vitest-tmp', `browser-sdk-${process.pid}`);

const suite = gatepostForSdk();
let chromium: Chromium;
let shop: PageServer;
let page: Page;
/** A sandbox public key allowed from the shop's origin, and the slug of a template storing its recipient. */
let key = '';
let slug = '';

beforeAll(async () => {
  execFileSync(process.execPath, [join(ROOT, 'sdk/browser/build.mjs'), built], { stdio: 'inherit' });
  shop = await startPageServer({ '/gatepost.js': readFileSync(join(built, 'gatepost.js'), 'utf8') });
  chromium = await launchChromium();
  page = await openPage(chromium.context, shop.origin);
  const made = await suite.gp.admin('POST', `/tenants/${suite.tenant.id}/keys`, {
    kind: 'public',
    sandbox: true,
    allowed_origins: [shop.origin],
  });
  expect(made.status).toBe(201);
  key = made.body.key;
  slug = `contact-${Date.now()}`;
  const template = await suite.gp.request('POST', '/v1/templates', {
    key: suite.tenant.live,
    body: { slug, to: 'desk@shop.example', from: 'site@shop.example', subject: 'From {{name}}', html: '<p>{{message}}</p>' },
  });
  expect(template.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await chromium?.close();
  await shop?.close();
  rmSync(built, { recursive: true, force: true });
});

/** What the page's code sees of a send: the answer, or the error's fields. */
interface Seen {
  sent?: { id: string; [field: string]: unknown };
  error?: Record<string, unknown>;
}

/**
 * Runs `send` in the page as its code would. The script is text: a function handed to
 * page.evaluate would be rewritten by the test runner, its import() included.
 */
function sendInPage(template: string, params: Record<string, unknown>, options: Record<string, unknown> = {}): Promise<Seen> {
  const args = { url: `${shop.origin}/gatepost.js`, key, baseUrl: suite.gp.url, template, params, options };
  return page.evaluate(`(async ({ url, key, baseUrl, template, params, options }) => {
    const gatepost = await import(url);
    gatepost.init({ publicKey: key, baseUrl });
    try {
      return { sent: await gatepost.send(template, params, options) };
    } catch (e) {
      return { error: { name: e.name, code: e.code, status: e.status, message: e.message, isGatepostError: e instanceof gatepost.GatepostError } };
    }
  })(${JSON.stringify(args)})`);
}

describe(`${manifest.name}: send(template, params) from a page`, () => {
  it("sends the stored template to its own recipient, and the message is in the sandbox inbox", async () => {
    const { sent } = await sendInPage(slug, { name: 'Ann', message: 'Hello from the page' });
    expect(sent).toMatchObject({ status: 'queued', to: 'desk@shop.example', sandbox: true, replayed: false });
    const captured = await eventually(async () => {
      const c = await suite.gp.request('GET', `/v1/sandbox/messages/${sent!.id}`, { key: suite.tenant.sandbox });
      return c.status === 200 && c.body;
    });
    expect(captured).toMatchObject({ subject: 'From Ann', html: '<p>Hello from the page</p>' });
  });

  it('sends once when a send is repeated with its idempotency key', async () => {
    const options = { idempotencyKey: `order-${Date.now()}` };
    const first = await sendInPage(slug, { name: 'Bo', message: 'once' }, options);
    const again = await sendInPage(slug, { name: 'Bo', message: 'once' }, options);
    expect(again.sent).toMatchObject({ id: first.sent!.id, replayed: true });
  });

  it("throws a GatepostError carrying the API's code", async () => {
    const { error } = await sendInPage('no-such-template', {});
    expect(error).toMatchObject({ name: 'GatepostError', isGatepostError: true, code: 'template_not_found', status: 422 });
  });
});

describe(`${manifest.name} as a package`, () => {
  it('has the files its exports name', () => {
    const exported = manifest.exports['.'] as { types: string; import: string };
    for (const file of [exported.import, exported.types]) {
      expect(() => readFileSync(join(built, file.replace(/^\.\/dist\//, ''))), file).not.toThrow();
    }
  });
});
