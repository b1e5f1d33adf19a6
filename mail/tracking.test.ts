// The pure parts of tracking: tokens, the html rewrite, the machine-open rule, and what a send's
// stream and switches make of a message.
import { describe, expect, it } from 'vitest';
import { applyTracking, trackingChoice, trackingLinks, unsubscribeUrl } from './tracking.apply.ts';
import { rewriteHtml } from './tracking.html.ts';
import { MACHINE_OPEN_MS, looksMachineMade } from './tracking.machine.ts';
import { makeToken, newTrackingKey, readToken, signedWith, unsubscribeTokenOf } from './tracking.token.ts';
import { mailOptions, textFromHtml, type RenderedContent } from './content.ts';

const ID = 'msg_06h1cbvwhrrcy7kyextq6893qg';
const LINKS = { publicUrl: 'https://mail.example', mailDomain: 'bounces.b.example' };

describe('tracking tokens', () => {
  it('signs the kind, the message and the destination: a change to any is refused', () => {
    const key = newTrackingKey();
    const token = makeToken(key, 'click', ID, 'https://shop.example/a');
    const claim = readToken('click', token)!;
    expect(claim).toMatchObject({ message_id: ID, url: 'https://shop.example/a' });
    expect(signedWith(key, claim)).toBe(true);
    expect(signedWith(newTrackingKey(), claim)).toBe(false);
    expect(signedWith(key, { ...claim, url: 'https://evil.example/' })).toBe(false);
    // An open token is no unsubscribe token, though both are `<id>.<mac>`.
    expect(signedWith(key, readToken('unsubscribe', makeToken(key, 'open', ID))!)).toBe(false);
  });

  it('reads nothing from a token of the wrong shape or length', () => {
    const token = makeToken(newTrackingKey(), 'open', ID);
    expect(readToken('open', token.slice(0, -1))).toBeNull();
    expect(readToken('open', `${token}x`)).toBeNull();
    expect(readToken('open', `nope.${token.split('.')[1]}`)).toBeNull();
    expect(readToken('click', token)).toBeNull();
  });
});

describe('rewriteHtml', () => {
  const track = (url: string) => `T(${url})`;

  it('rewrites web links only, decoding and re-escaping their hrefs, and leaves the rest byte for byte', () => {
    const html =
      '<p class=x>Hi <A HREF="https://a.example/?q=1&amp;r=2">a</A> <a href="mailto:x@y.example">m</a> <a href="#top">t</a> <a href="javascript:alert(1)">j</a> <a name=n>no href</a></p>';
    const out = rewriteHtml(html, { link: track });
    expect(out).toBe(
      '<p class=x>Hi <A href="T(https://a.example/?q=1&amp;r=2)">a</A> <a href="mailto:x@y.example">m</a> <a href="#top">t</a> <a href="javascript:alert(1)">j</a> <a name=n>no href</a></p>',
    );
  });

  it('puts the pixel before </body>, or at the end of a fragment', () => {
    expect(rewriteHtml('<html><body><p>x</p></body></html>', { pixel: 'P' })).toMatch(
      /<p>x<\/p><img src="P"[^>]*><\/body><\/html>$/,
    );
    expect(rewriteHtml('<p>x</p>', { pixel: 'P' })).toMatch(/^<p>x<\/p><img src="P"/);
  });

  it('rewrites unquoted and single-quoted hrefs, and only the first of two, leaving script and comments alone', () => {
    const html =
      '<a href=https://u.example/x>u</a><area href=\'https://s.example/\' alt=s><a href="https://one.example/" href="https://two.example/">2</a><!-- <a href="https://c.example/"> --><script>\'<a href="https://j.example/">\'</script>';
    expect(rewriteHtml(html, { link: track })).toBe(
      '<a href="T(https://u.example/x)">u</a><area href="T(https://s.example/)" alt=s><a href="T(https://one.example/)" href="https://two.example/">2</a><!-- <a href="https://c.example/"> --><script>\'<a href="https://j.example/">\'</script>',
    );
  });

  it('leaves a link the callback declines', () => {
    expect(rewriteHtml('<a href="https://u.example/">u</a>', { link: () => null })).toBe('<a href="https://u.example/">u</a>');
  });
});

describe('looksMachineMade', () => {
  const sent = Date.parse('2026-01-01T00:00:00Z');
  it("marks a provider proxy's user agent, and an open within moments of delivery", () => {
    expect(
      looksMachineMade(
        'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
        sent + 3_600_000,
        sent,
      ),
    ).toBe(true);
    expect(looksMachineMade('Mozilla/5.0', sent + 3_600_000, sent)).toBe(true);
    expect(looksMachineMade('Mozilla/5.0 (iPhone) Mobile/15E148', sent + MACHINE_OPEN_MS - 1, sent)).toBe(true);
    expect(looksMachineMade('Mozilla/5.0 (iPhone) Mobile/15E148', sent + MACHINE_OPEN_MS, sent)).toBe(false);
    expect(looksMachineMade(null, sent + 60_000, null)).toBe(false);
  });
});

describe('applyTracking', () => {
  const content: RenderedContent = {
    from: 'a@b.example',
    to: 'c@d.example',
    reply_to: null,
    subject: 's',
    html: '<a href="https://shop.example/">shop</a>',
    text: null,
    headers: {},
  };
  const key = newTrackingKey();

  it('changes nothing on a transactional send that asked for nothing', () => {
    expect(applyTracking(content, trackingChoice('transactional', {}), LINKS, { id: ID, key })).toEqual(content);
  });

  it('tracks broadcast mail, keeps the unsubscribe link and the text part as written, and adds the RFC 8058 fields', () => {
    const unsubscribe = unsubscribeUrl(LINKS, ID, key);
    const html = `${content.html}<p><a href="https://shop.example/?a=1&amp;b=2">sale</a></p><a href="${unsubscribe}">unsubscribe</a>`;
    const out = applyTracking({ ...content, html }, trackingChoice('broadcast', {}), LINKS, { id: ID, key });
    expect(out.html).toContain('href="https://mail.example/t/c/');
    expect(out.html).toContain(`href="${unsubscribe}"`);
    expect(out.html).toContain('<img src="https://mail.example/t/o/');
    // No text part is made here: made when sent or shown, it has the links as written.
    expect(out.text).toBeNull();
    const text = textFromHtml(out.html);
    expect(text).toContain('shop [https://shop.example/]');
    expect(text).toContain('sale [https://shop.example/?a=1&b=2]');
    expect(text).toContain(`[${unsubscribe}]`);
    expect(text).not.toContain('/t/');
    expect(text).toBe(textFromHtml(html));
    expect(mailOptions(out, `<${ID}@b.example>`, new Date()).text).toBe(text);
    expect(out.headers['List-Unsubscribe']).toMatch(
      new RegExp(`^<${unsubscribe}>, <mailto:u\\+${ID}\\.[A-Za-z0-9_-]{22}@bounces\\.b\\.example\\?subject=unsubscribe>$`),
    );
    const local = /mailto:([^@]+)@/.exec(out.headers['List-Unsubscribe']!)![1]!;
    expect(unsubscribeTokenOf(local)).toBe(unsubscribe.slice(unsubscribe.lastIndexOf('/') + 1));
    expect(out.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
  });

  it('offers no mailto address for mail from a domain with no return path here', () => {
    const links = { ...LINKS, mailDomain: null };
    const out = applyTracking(content, trackingChoice('broadcast', {}), links, { id: ID, key });
    expect(out.headers['List-Unsubscribe']).toBe(`<${unsubscribeUrl(links, ID, key)}>`);
  });

  it("keeps a sender's own List-Unsubscribe", () => {
    const own = { ...content, headers: { 'list-unsubscribe': '<mailto:me@b.example>' } };
    const out = applyTracking(own, trackingChoice('transactional', { list_unsubscribe: true }), LINKS, { id: ID, key });
    expect(out.headers).toEqual(own.headers);
  });
});

describe('trackingLinks', () => {
  it("puts a tracking host in place of GATEPOST_PUBLIC_URL's host, keeping its scheme, port and path", () => {
    const hosts = { tracking_host: 'track.b.example', return_path: 'bounces.b.example' };
    expect(trackingLinks('https://gatepost.example', hosts)).toEqual({
      publicUrl: 'https://track.b.example',
      mailDomain: 'bounces.b.example',
    });
    expect(trackingLinks('http://127.0.0.1:3000/gp', hosts).publicUrl).toBe('http://track.b.example:3000/gp');
  });

  it('keeps GATEPOST_PUBLIC_URL, and no mailto, for a domain with neither', () => {
    expect(trackingLinks('https://gatepost.example', { tracking_host: null, return_path: null })).toEqual({
      publicUrl: 'https://gatepost.example',
      mailDomain: null,
    });
  });
});
