// The tokens of tracked links, open pixels and unsubscribe links (issue 24). Each names its
// message and is signed with HMAC-SHA256 under that message's own tracking key, drawn at admission
// and kept in its MessageActor: only Gatepost can make one, so a click token can never be made
// to redirect anywhere its message did not link to, and no server-wide secret needs setting or
// sharing between hosts. A click token also carries its destination, so the redirect needs no
// look-up of the message's links.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../lib/ids.ts';

export type TokenKind = 'open' | 'click' | 'unsubscribe';

/** A message's tracking key: 16 random bytes, base64url. */
export const newTrackingKey = (): string => randomToken(16);

/** The signature's length in characters: 16 bytes (128 bits) of HMAC-SHA256, base64url. */
const MAC_CHARS = 22;
const MESSAGE_ID = /^msg_[0-9a-z]{26}$/i;

function mac(key: string, kind: TokenKind, messageId: string, url: string): string {
  // The kind is signed too: an open token is no unsubscribe token.
  return createHmac('sha256', Buffer.from(key, 'base64url'))
    .update(`${kind}\n${messageId}\n${url}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/** `<message id>.<mac>`, and for a click `<message id>.<url, base64url>.<mac>`. */
export function makeToken(key: string, kind: TokenKind, messageId: string, url = ''): string {
  const signature = mac(key, kind, messageId, url);
  return kind === 'click' ? `${messageId}.${Buffer.from(url).toString('base64url')}.${signature}` : `${messageId}.${signature}`;
}

/** Where a click token is served, under GATEPOST_PUBLIC_URL or a tracking host. */
export const CLICK_PATH = '/t/c/';

/** The link a tracked link (`…/t/c/<token>`) stands for, as its sender wrote it; null for any other. */
export function clickTarget(href: string): string | null {
  const at = href.lastIndexOf(CLICK_PATH);
  return at < 0 ? null : (readToken('click', href.slice(at + CLICK_PATH.length))?.url ?? null);
}

/** What a token says, before its signature is checked (only the message's actor holds the key). */
export interface TokenClaim {
  kind: TokenKind;
  message_id: string;
  url: string;
  mac: string;
}

/** Takes a token apart; null when it cannot be one of `kind` (wrong shape or length). */
export function readToken(kind: TokenKind, token: string): TokenClaim | null {
  const parts = token.split('.');
  if (parts.length !== (kind === 'click' ? 3 : 2)) return null;
  const messageId = parts[0]!;
  const signature = parts.at(-1)!;
  if (!MESSAGE_ID.test(messageId) || !/^[A-Za-z0-9_-]+$/.test(signature) || signature.length !== MAC_CHARS) return null;
  const url = kind === 'click' ? Buffer.from(parts[1]!, 'base64url').toString('utf8') : '';
  return { kind, message_id: messageId, url, mac: signature };
}

/**
 * The local part of the mailto unsubscribe address (`u+<token>`, at the return-path domain, as
 * VERP's `b+<message id>` is): 55 characters, within RFC 5321's 64. The signature is case
 * sensitive; receivers pass local parts on as written.
 */
export const unsubscribeLocalPart = (token: string): string => `u+${token}`;

/** The unsubscribe token in a local part that looks like one (`u+…`); null for any other local part. */
export function unsubscribeTokenOf(localPart: string): string | null {
  return localPart.startsWith('u+') ? localPart.slice(2) : null;
}

/** Whether `claim` was signed with `key`. */
export function signedWith(key: string, claim: TokenClaim): boolean {
  const expected = Buffer.from(mac(key, claim.kind, claim.message_id, claim.url));
  const given = Buffer.from(claim.mac);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Only web links are tracked or redirected to: never `javascript:`, `data:` or anything else. */
export function isWebUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
