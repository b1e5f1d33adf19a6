// The layout of a docs page: a navigation with every page, the API reference and the text
// indexes, then the page. Self-contained (its style inline), so the docs work with no network.
import type { DocPage } from './docs.pages.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `
body{margin:0;font:16px/1.55 system-ui,sans-serif;color:#1f2328;display:flex;min-height:100vh}
nav{flex:0 0 15rem;padding:1.5rem 1rem;background:#f6f8fa;border-right:1px solid #d0d7de}
nav a{display:block;padding:.2rem .4rem;color:#1f2328;text-decoration:none;border-radius:4px}
nav a:hover{background:#eaeef2} nav a[aria-current]{font-weight:600;background:#ddf4ff}
nav h2{font-size:.8rem;text-transform:uppercase;color:#59636e;margin:1.2rem .4rem .3rem}
main{flex:1;max-width:60rem;padding:1.5rem 2.5rem;overflow-wrap:break-word;min-width:0}
code,pre{font:14px ui-monospace,monospace;background:#f6f8fa;border-radius:4px}
code{padding:.1rem .3rem} pre{padding:.8rem;overflow-x:auto} pre code{padding:0}
table{border-collapse:collapse;display:block;overflow-x:auto} th,td{border:1px solid #d0d7de;padding:.3rem .6rem;vertical-align:top}
a{color:#0969da} img{max-width:100%}
`;

/** A page in the layout; `current` is the slug the navigation marks. */
export function layout(pages: DocPage[], current: DocPage): string {
  const link = (p: DocPage) =>
    `<a href="/docs/${p.slug === 'index' ? '' : p.slug}"${p === current ? ' aria-current="page"' : ''}>${escapeHtml(p.title)}</a>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(current.title)} · Gatepost</title>
<link rel="alternate" type="text/markdown" href="/docs/${current.slug}.md">
<style>${STYLE}</style>
</head>
<body>
<nav aria-label="Documentation">
${pages.map(link).join('\n')}
<h2>Reference</h2>
<a href="/docs/api/">API reference</a>
<a href="/openapi.json">OpenAPI document</a>
<h2>For agents</h2>
<a href="/docs/${current.slug}.md">This page as markdown</a>
<a href="/llms.txt">llms.txt</a>
<a href="/llms-full.txt">llms-full.txt</a>
</nav>
<main>
${current.html}
</main>
</body>
</html>
`;
}
