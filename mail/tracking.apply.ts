// What tracking and unsubscribe do to a rendered message (issue 24), decided at admission: its
// links through the click endpoint, the open pixel, and the List-Unsubscribe fields (RFC 2369,
// RFC 8058), all pointing at Gatepost's own HTTP port under GATEPOST_PUBLIC_URL, or under the
// sending domain's tracking host (a CNAME to it) where it has one; the mailto unsubscribe address
// is on the sending domain's return path, which the inbound MX takes mail for.
import type { RenderedContent } from './content.ts';
import { rewriteHtml } from './tracking.html.ts';
import { CLICK_PATH, makeToken, unsubscribeLocalPart } from './tracking.token.ts';

/** What a send asked for, its stream's defaults filled in. */
export interface TrackingChoice {
  opens: boolean;
  clicks: boolean;
  /** List-Unsubscribe and List-Unsubscribe-Post on the message. */
  unsubscribe: boolean;
}

/** The defaults of a stream: everything on for broadcast mail, off for transactional. */
export function trackingChoice(
  stream: 'transactional' | 'broadcast',
  asked: { track_opens?: boolean; track_clicks?: boolean; list_unsubscribe?: boolean },
): TrackingChoice {
  const broadcast = stream === 'broadcast';
  return {
    opens: asked.track_opens ?? broadcast,
    clicks: asked.track_clicks ?? broadcast,
    unsubscribe: asked.list_unsubscribe ?? broadcast,
  };
}

export interface TrackingLinks {
  /** What the links start with: GATEPOST_PUBLIC_URL, its host the tracking host's where there is one; no trailing slash. */
  publicUrl: string;
  /** The domain of the List-Unsubscribe mailto address (the sending domain's return path); null: no mailto. */
  mailDomain: string | null;
}

/**
 * The links of mail from a sending domain: under GATEPOST_PUBLIC_URL with the tracking host in
 * place of its host name (scheme, port and path stay: the CNAME reaches the same server), and the
 * mailto address on its return-path domain. A domain with neither gets GATEPOST_PUBLIC_URL, no mailto.
 */
export function trackingLinks(
  publicUrl: string,
  hosts: { tracking_host: string | null; return_path: string | null },
): TrackingLinks {
  let base = publicUrl;
  if (hosts.tracking_host) {
    const url = new URL(publicUrl);
    url.hostname = hosts.tracking_host;
    base = url.href.replace(/\/+$/, '');
  }
  return { publicUrl: base, mailDomain: hosts.return_path };
}

/** The unsubscribe page of a message: `{{unsubscribe_url}}`, and the https List-Unsubscribe. */
export function unsubscribeUrl(links: TrackingLinks, messageId: string, key: string): string {
  return unsubscribePage(links, makeToken(key, 'unsubscribe', messageId));
}

const unsubscribePage = (links: TrackingLinks, token: string) => `${links.publicUrl}/u/${token}`;

/** The content as it is to be sent: unchanged when nothing is tracked and no unsubscribe asked for. */
export function applyTracking(
  content: RenderedContent,
  choice: TrackingChoice,
  links: TrackingLinks,
  message: { id: string; key: string },
): RenderedContent {
  const { id, key } = message;
  // Each token is an HMAC: none is made for transactional mail that tracks nothing (the default).
  if (!choice.clicks && !choice.opens && !choice.unsubscribe) return content;
  const unsubscribeToken = makeToken(key, 'unsubscribe', id);
  const unsubscribe = unsubscribePage(links, unsubscribeToken);
  let { html, headers } = content;
  if (choice.clicks || choice.opens) {
    html = rewriteHtml(html, {
      // The unsubscribe link stays as it is: a tracked one would be a click, not an unsubscribe.
      link: choice.clicks
        ? (url) => (url === unsubscribe ? null : `${links.publicUrl}${CLICK_PATH}${makeToken(key, 'click', id, url)}`)
        : undefined,
      pixel: choice.opens ? `${links.publicUrl}/t/o/${makeToken(key, 'open', id)}` : undefined,
    });
    // Only the html is tracked: a text part Gatepost makes (textFromHtml) shows the links as written.
  }
  // A sender's own List-Unsubscribe stands.
  const own = Object.keys(headers).some((name) => name.toLowerCase() === 'list-unsubscribe');
  if (choice.unsubscribe && !own) {
    const mailto = links.mailDomain
      ? `, <mailto:${unsubscribeLocalPart(unsubscribeToken)}@${links.mailDomain}?subject=unsubscribe>`
      : '';
    headers = {
      ...headers,
      'List-Unsubscribe': `<${unsubscribe}>${mailto}`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    };
  }
  return { ...content, html, headers };
}
