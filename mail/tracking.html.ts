// Rewrites a message's html for tracking (issue 24): each web link through the click endpoint,
// and the open pixel before </body>. The html is read with htmlparser2 (the parser content.ts,
// the capture inbox and html-to-text already use) and only the href attributes it finds are
// replaced, at their source offsets, so everything else goes out byte for byte as the sender wrote it.
import { Parser } from 'htmlparser2';
import { isWebUrl } from './tracking.token.ts';

export interface TrackingRewrite {
  /** The tracked URL for a link, or null to leave it as it is. */
  link?: (url: string) => string | null;
  /** The open pixel's URL. */
  pixel?: string;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** The html with its links and pixel rewritten; links that are no web links (mailto:, #anchors, javascript:) stay. */
export function rewriteHtml(html: string, rewrite: TrackingRewrite): string {
  const edits: { start: number; end: number; text: string }[] = [];
  let tag = '';
  /** Whether the tag being read had its href already: a browser follows the first of two. */
  let hadHref = false;
  let bodyEnd: number | null = null;
  const parser: Parser = new Parser(
    {
      onopentagname(name) {
        tag = name;
        hadHref = false;
      },
      onattribute(name, value) {
        if (name !== 'href' || hadHref) return;
        hadHref = true;
        if (!rewrite.link || (tag !== 'a' && tag !== 'area') || !isWebUrl(value.trim())) return;
        const tracked = rewrite.link(value.trim());
        // The parser's indices span the attribute, name to closing quote.
        if (tracked !== null)
          edits.push({ start: parser.startIndex, end: parser.endIndex, text: `href="${escapeAttribute(tracked)}"` });
      },
      onclosetag(name, implied) {
        if (name === 'body' && !implied) bodyEnd ??= parser.startIndex;
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  if (rewrite.pixel) {
    const img = `<img src="${escapeAttribute(rewrite.pixel)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
    // Before </body> where the html has one; at the end of a fragment.
    const at = bodyEnd ?? html.length;
    edits.push({ start: at, end: at, text: img });
  }
  let out = html;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}
