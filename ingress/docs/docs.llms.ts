// The text indexes for coding agents (https://llmstxt.org): /llms.txt names Gatepost, sums it up,
// and links every page's markdown with one line each; /llms-full.txt is every page in one file.
// Links are root-relative, so they hold for whatever address the server is reached at.
import type { DocPage } from './docs.pages.ts';

/** A link between pages (`errors.md#section`), made root-relative for a file that is not in /docs/. */
const PAGE_LINK = /\]\(([a-z0-9][a-z0-9-]*\.md(?:#[^)\s]*)?)\)/g;

const entry = (url: string, title: string, note: string) => `- [${title}](${url})${note ? `: ${note}` : ''}`;

function summaryOf(pages: DocPage[]): string {
  return pages.find((p) => p.slug === 'index')?.summary ?? 'A self-hostable transactional email service.';
}

export function llmsTxt(pages: DocPage[]): string {
  return [
    '# Gatepost',
    '',
    `> ${summaryOf(pages)}`,
    '',
    'Every page below is markdown; its HTML is at the same address without `.md`. Errors of the native API are `{"error": {"code", "message", "details"}}`.',
    '',
    '## Docs',
    '',
    ...pages.map((p) => entry(`/docs/${p.slug}.md`, p.title, p.summary)),
    '',
    '## API',
    '',
    entry(
      '/openapi.json',
      'OpenAPI document',
      'every route (the native API and the compatibility endpoints) as OpenAPI 3.1, with an example on each.',
    ),
    '',
    '## Optional',
    '',
    entry('/llms-full.txt', 'Every page in one file', ''),
    '',
  ].join('\n');
}

export function llmsFullTxt(pages: DocPage[]): string {
  const body = pages.map((p) => `<!-- /docs/${p.slug}.md -->\n\n${p.markdown.replace(PAGE_LINK, '](/docs/$1)').trim()}\n`);
  return `# Gatepost\n\n> ${summaryOf(pages)}\n\n${body.join('\n')}`;
}
