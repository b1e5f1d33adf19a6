// The pages of docs/: read once, when the server is built, and rendered once with marked (GitHub's
// flavour, headings with GitHub's ids, so that `security.md#storage` finds its section). Images
// beside the pages are kept too, to be served as they are.
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked, type Token, type Tokens } from 'marked';
import { gfmHeadingId } from 'marked-gfm-heading-id';

/** docs/ at the repository's root; the build copies it to dist/docs/, beside the compiled code. */
export const DOCS_DIR = fileURLToPath(new URL('../../docs/', import.meta.url));

export interface DocPage {
  /** The file name without `.md`: the page is at /docs/<slug>. */
  slug: string;
  /** The text of its first heading. */
  title: string;
  /** The first sentence of its first paragraph, in markdown without links. */
  summary: string;
  markdown: string;
  /** The page's body as HTML, without the layout. */
  html: string;
}

export interface DocImage {
  name: string;
  contentType: string;
  bytes: Buffer;
}

export interface Docs {
  /** `index` first, then the others by slug. */
  pages: DocPage[];
  images: DocImage[];
}

const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.webp': 'image/webp',
};

/** A link to another page, `errors.md` or `errors.md#section`. */
const PAGE_LINK = /^([a-z0-9][a-z0-9-]*)\.md(#.*)?$/;

const marked = new Marked({ gfm: true }).use(gfmHeadingId(), {
  // In HTML a link to another page goes to that page's HTML (the .md stays for the markdown).
  walkTokens(token) {
    if (token.type !== 'link') return;
    const link = token as Tokens.Link;
    const page = PAGE_LINK.exec(link.href);
    if (page) link.href = `${page[1]}${page[2] ?? ''}`;
  },
});

/** The text of inline tokens, without their markup. */
function plain(tokens: Token[] | undefined): string {
  return (tokens ?? []).map((t) => ('tokens' in t && t.tokens ? plain(t.tokens) : 'text' in t ? String(t.text) : '')).join('');
}

/** Up to the first full stop; a paragraph that leads into a list or a block ends with one instead of its colon. */
function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = /\.(\s|$)/.exec(flat);
  return end ? flat.slice(0, end.index + 1) : flat.replace(/:$/, '.');
}

export function renderPage(slug: string, markdown: string): DocPage {
  const tokens = marked.lexer(markdown);
  const heading = tokens.find((t): t is Tokens.Heading => t.type === 'heading');
  const paragraph = tokens.find((t): t is Tokens.Paragraph => t.type === 'paragraph');
  return {
    slug,
    title: heading ? plain(heading.tokens) : slug,
    // The paragraph's own markdown (code spans kept), its links reduced to their text.
    summary: paragraph ? firstSentence(paragraph.text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')) : '',
    markdown,
    html: marked.parse(markdown, { async: false }),
  };
}

/** Every page and image of `dir`. */
export function loadDocs(dir = DOCS_DIR): Docs {
  const files = readdirSync(dir).sort();
  const pages = files
    .filter((f) => f.endsWith('.md') && PAGE_LINK.test(f))
    .map((f) => renderPage(f.slice(0, -3), readFileSync(join(dir, f), 'utf8')))
    .sort((a, b) => Number(b.slug === 'index') - Number(a.slug === 'index'));
  const images = files
    .filter((f) => IMAGE_TYPES[extname(f).toLowerCase()])
    .map((name) => ({ name, contentType: IMAGE_TYPES[extname(name).toLowerCase()]!, bytes: readFileSync(join(dir, name)) }));
  return { pages, images };
}
