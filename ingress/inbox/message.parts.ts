// What the inbox shows of a capture beyond its stored fields: the links its html holds, whether
// it asks for remote images, its source as an .eml, and its html as a document of its own under
// a Content-Security-Policy that lets nothing in it run.
import { Parser } from 'htmlparser2';
import { composeRaw } from '../../mail/mime.ts';
import type { CapturedMessage } from '../../store/catalog.port.ts';

export interface Link {
  url: string;
  /** The link's text as shown, whitespace collapsed; empty for an image map's area. */
  text: string;
}

/** Every a[href] and area[href] of the html, in order, as written (not resolved). */
export function linksOf(html: string): Link[] {
  const links: Link[] = [];
  let open: Link | null = null;
  const parser = new Parser({
    onopentag(name, attributes) {
      if ((name !== 'a' && name !== 'area') || attributes.href === undefined) return;
      const link = { url: attributes.href.trim(), text: '' };
      links.push(link);
      if (name === 'a') open = link;
    },
    ontext(text) {
      if (open) open.text += text;
    },
    onclosetag(name) {
      if (name === 'a') open = null;
    },
  });
  parser.end(html);
  return links.map((l) => ({ ...l, text: l.text.replace(/\s+/g, ' ').trim() }));
}

// An http(s) or protocol-relative URL in an attribute that loads something (img src, background,
// a srcset, a poster), or in a CSS url(): what the image policy blocks until asked.
const REMOTE = /(?:\b(?:src|srcset|background|poster)\s*=\s*["']?|url\(\s*["']?)\s*(?:https?:)?\/\//i;

/** Whether the html loads anything from the network when shown. */
export const hasRemoteContent = (html: string): boolean => REMOTE.test(html);

/**
 * The capture as the MIME message it would have been sent as: a signed capture's exact bytes, or
 * an unsigned one composed now (with the Message-ID and Date it was captured with).
 */
export function rawSource(c: CapturedMessage): Promise<Buffer> {
  if (c.source !== null) return Promise.resolve(Buffer.from(c.source, 'base64'));
  const { 'Message-ID': messageId, ...headers } = c.headers;
  return composeRaw(
    { from: c.from, to: c.to, reply_to: null, subject: c.subject, html: c.html, text: c.text, headers },
    { messageId: messageId ?? `<${c.message_id}@gatepost>`, date: new Date(c.captured_at) },
  );
}

/**
 * The policy the captured html is served under, on top of the frame's sandbox: no script, no
 * form, no plugin, no connection; styles inline; images only from data: URLs until the person
 * asks for remote ones; and only the inbox may frame it. `sandbox` makes the document its own
 * opaque origin even when it is opened outside the frame.
 */
export function capturedHtmlPolicy(remoteImages: boolean): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `img-src data:${remoteImages ? ' https: http:' : ''}`,
    'font-src data:',
    "form-action 'none'",
    "frame-ancestors 'self'",
    'sandbox allow-popups allow-popups-to-escape-sandbox',
  ].join('; ');
}

/** Links in the captured html open in a new tab: the frame may not navigate itself or the inbox. */
export const framedHtml = (html: string): string => `<!doctype html><base target="_blank">${html}`;
