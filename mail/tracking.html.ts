// Rewrites a message's html for tracking (issue 24): each web link through the click endpoint,
// and the open pixel before </body>. The html is parsed with parse5 (the WHATWG algorithm, as a
// mail client's renderer reads it) and only the href attributes it finds are replaced, at their
// source offsets, so everything else goes out byte for byte as the sender wrote it.
import { parse, type DefaultTreeAdapterMap } from 'parse5';
import { isWebUrl } from './tracking.token.ts';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

export interface TrackingRewrite {
  /** The tracked URL for a link, or null to leave it as it is. */
  link?: (url: string) => string | null;
  /** The open pixel's URL. */
  pixel?: string;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

function* elements(node: Node): Generator<Element> {
  if ('tagName' in node) yield node;
  const children = 'childNodes' in node ? node.childNodes : [];
  for (const child of children) yield* elements(child);
  // A <template>'s content is a fragment of its own.
  if ('content' in node) yield* elements(node.content);
}

/** The html with its links and pixel rewritten; links that are no web links (mailto:, #anchors, javascript:) stay. */
export function rewriteHtml(html: string, rewrite: TrackingRewrite): string {
  const document = parse(html, { sourceCodeLocationInfo: true });
  const edits: { start: number; end: number; text: string }[] = [];
  let body: Element | null = null;
  for (const element of elements(document)) {
    if (element.tagName === 'body') body = element;
    if (!rewrite.link || (element.tagName !== 'a' && element.tagName !== 'area')) continue;
    const href = element.attrs.find((a) => a.name === 'href');
    const where = element.sourceCodeLocation?.attrs?.href;
    if (!href || !where || !isWebUrl(href.value.trim())) continue;
    const tracked = rewrite.link(href.value.trim());
    if (tracked !== null)
      edits.push({ start: where.startOffset, end: where.endOffset, text: `href="${escapeAttribute(tracked)}"` });
  }
  if (rewrite.pixel) {
    const img = `<img src="${escapeAttribute(rewrite.pixel)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
    // Before </body> where the html has one; at the end of a fragment.
    const at = body?.sourceCodeLocation?.endTag?.startOffset ?? html.length;
    edits.push({ start: at, end: at, text: img });
  }
  let out = html;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}
