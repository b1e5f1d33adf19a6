// The docs as a reader and an agent fetch them, from the whole HTTP app (inject): every page of
// docs/ as HTML and as its markdown, the links between pages, the API reference with nothing from
// another host, and llms.txt (every link of which answers) and llms-full.txt.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { tempDir } from '../../test/harness/gatepost.harness.ts';
import { docsPlugin } from './docs.plugin.ts';
import { DOCS_DIR, loadDocs } from './docs.pages.ts';

let app: TestApp;
const get = (url: string) => app.server.app.inject({ method: 'GET', url });

const SLUGS = readdirSync(DOCS_DIR)
  .filter((f) => f.endsWith('.md'))
  .map((f) => f.slice(0, -3));

/** Every href and src of a page, resolved against its URL. */
function linksOf(html: string, pageUrl: string): URL[] {
  return [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map(
    (m) => new URL(m[1]!.replace(/&amp;/g, '&'), `http://gatepost.test${pageUrl}`),
  );
}

beforeAll(async () => {
  app = await buildApp('docs');
});
afterAll(() => app.close());

describe('the docs pages', () => {
  it('serves every page of docs/ as HTML, with a navigation to every page', async () => {
    expect(SLUGS).toContain('index');
    for (const slug of SLUGS) {
      const res = await get(slug === 'index' ? '/docs/' : `/docs/${slug}`);
      expect(res.statusCode, slug).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const nav = /<nav[^>]*>([\s\S]*?)<\/nav>/.exec(res.body)![1]!;
      for (const other of SLUGS) expect(nav).toContain(`href="/docs/${other === 'index' ? '' : other}"`);
      // The page's own first heading, rendered from its markdown.
      const heading = /^# (.+)$/m.exec(readFileSync(join(DOCS_DIR, `${slug}.md`), 'utf8'))![1]!;
      const start = heading.split(/[`*]/)[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      expect(res.body).toMatch(new RegExp(`<h1 id="[^"]+">${start}`));
    }
    expect((await get('/docs/index')).body).toBe((await get('/docs/')).body);
    const bare = await get('/docs');
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/docs/');
  });

  it('serves every page as its markdown at /docs/<page>.md', async () => {
    for (const slug of SLUGS) {
      const res = await get(`/docs/${slug}.md`);
      expect(res.statusCode, slug).toBe(200);
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(res.body).toBe(readFileSync(join(DOCS_DIR, `${slug}.md`), 'utf8'));
    }
  });

  it('links pages to pages that exist, and sections to headings that exist', async () => {
    const checked = new Set<string>();
    for (const slug of SLUGS) {
      const url = slug === 'index' ? '/docs/' : `/docs/${slug}`;
      for (const link of linksOf((await get(url)).body, url)) {
        if (link.host !== 'gatepost.test' || checked.has(link.href)) continue;
        checked.add(link.href);
        const target = await get(link.pathname);
        expect(target.statusCode, `${link.pathname} linked from ${url}`).toBe(200);
        if (link.hash) expect(target.body, `${link.href} linked from ${url}`).toContain(`id="${link.hash.slice(1)}"`);
      }
    }
    // Links between pages go to their HTML, not their markdown.
    expect(checked).toContain('http://gatepost.test/docs/security#storage');
  });

  it('answers an unknown page with 404 not_found in the API error shape', async () => {
    for (const url of ['/docs/no-such-page', '/docs/no-such-page.md', '/docs/..%2Fpackage.json']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ error: { code: 'not_found' } });
    }
  });

  it('serves the images beside the pages', async () => {
    const dir = tempDir('docs-images');
    mkdirSync(dir, { recursive: true });
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    writeFileSync(join(dir, 'flow.png'), png);
    writeFileSync(join(dir, 'index.md'), '# Home\n\nA page with a picture.\n\n![The flow](flow.png)\n');
    const docs = Fastify();
    docs.register(docsPlugin, { docs: loadDocs(dir) });
    const image = await docs.inject({ method: 'GET', url: '/docs/flow.png' });
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.rawPayload.equals(png)).toBe(true);
    expect((await docs.inject({ method: 'GET', url: '/docs/' })).body).toContain('<img src="flow.png" alt="The flow">');
    await docs.close();
  });
});

describe('the API reference', () => {
  it('renders the served OpenAPI document with its script served here, nothing from another host', async () => {
    const page = await get('/docs/api/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('"url": "/openapi.json"');
    const links = linksOf(page.body, '/docs/api/');
    expect(links.map((l) => l.pathname)).toEqual(['/docs/api/js/scalar.js']);
    expect(links.every((l) => l.host === 'gatepost.test')).toBe(true);
    // No address of another host anywhere in the page (its inline configuration included).
    expect(page.body).not.toMatch(/https?:\/\//);
    const script = await get('/docs/api/js/scalar.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(script.body).toContain('createApiReference');
  });

  it('sends /docs/api to /docs/api/, and answers anything else under it with the coded not_found', async () => {
    const bare = await get('/docs/api');
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/docs/api/');
    const missing = await get('/docs/api/nothing-here');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'not_found', message: 'No page /docs/api/nothing-here.' } });
  });
});

describe('llms.txt and llms-full.txt', () => {
  it('names Gatepost, sums it up, and lists every page as markdown, one line each, every link answering 200', async () => {
    const res = await get('/llms.txt');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const lines = res.body.split('\n');
    expect(lines[0]).toBe('# Gatepost');
    expect(lines[2]).toMatch(/^> Gatepost is a self-hostable transactional email service\./);
    expect(lines).toContain('## Docs');
    for (const slug of SLUGS)
      expect(lines.filter((l) => l.startsWith(`- [`) && l.includes(`](/docs/${slug}.md)`))).toHaveLength(1);
    const links = [...res.body.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toEqual(expect.arrayContaining(['/openapi.json', '/llms-full.txt']));
    for (const link of links) expect((await get(link)).statusCode, link).toBe(200);
  });

  it('holds every page in one file, links between pages made root-relative', async () => {
    const res = await get('/llms-full.txt');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    for (const slug of SLUGS) {
      const markdown = readFileSync(join(DOCS_DIR, `${slug}.md`), 'utf8');
      expect(res.body).toContain(`<!-- /docs/${slug}.md -->\n\n${/^# .+$/m.exec(markdown)![0]}`);
    }
    expect(res.body).toContain('](/docs/security.md#storage)');
    const links = [...res.body.matchAll(/\]\((\/docs\/[^)#]+)/g)].map((m) => m[1]!);
    for (const link of new Set(links)) expect((await get(link)).statusCode, link).toBe(200);
  });

  it('keeps the docs out of the OpenAPI document', async () => {
    const doc = (await get('/openapi.json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs') || p.startsWith('/llms'))).toEqual([]);
  });
});
