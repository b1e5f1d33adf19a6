// The docs as a person reads them: a started Gatepost, its API reference opened in headless
// Chromium (Debian's). The reference renders every tag of the OpenAPI document and fetches
// nothing from any host but Gatepost itself: it works with no network. Then every link of
// llms.txt, fetched over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type Chromium } from '../harness/browser.harness.ts';
import { startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';

describe('the served docs', () => {
  let gp: GatepostProcess;
  let browser: Chromium;

  beforeAll(async () => {
    gp = await startGatepost();
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gp?.dispose();
  });

  it('renders the API reference from /openapi.json with nothing fetched from another host', async () => {
    const page = await browser.context.newPage();
    const fetched: string[] = [];
    page.on('request', (request) => fetched.push(request.url()));
    await page.goto(`${gp.url}/docs/api/`);
    // Each tag of the document becomes a section of the reference.
    const doc = (await gp.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { tags: string[] }>> };
    const tags = new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags)));
    for (const tag of tags) await page.getByText(tag, { exact: true }).first().waitFor();
    expect(fetched).toEqual(expect.arrayContaining([`${gp.url}/docs/api/js/scalar.js`, `${gp.url}/openapi.json`]));
    expect(fetched.filter((url) => new URL(url).origin !== new URL(gp.url).origin)).toEqual([]);
    await page.close();
  });

  it('answers 200 for every link of llms.txt', async () => {
    const llms = await gp.request('GET', '/llms.txt');
    expect(llms.status).toBe(200);
    const links = [...String(llms.body).matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toContain('/docs/errors.md');
    for (const link of links) expect((await fetch(new URL(link, gp.url))).status, link).toBe(200);
  });
});
