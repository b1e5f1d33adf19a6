// The hits on a sent message's links (issue 24): an open, a click or an unsubscribe, each carrying
// a token the message's actor checks against the key it was signed with (mail/tracking.token.ts)
// before it records anything. The ingress never learns which actor holds the message.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { isWebUrl, readToken, type TokenKind } from '../mail/tracking.token.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import type { TrackArgs, TrackResult } from '../actors/message/message.state.ts';

export interface Hit {
  kind: TokenKind;
  token: string;
  user_agent: string | null;
  ip: string | null;
  via?: TrackArgs['via'];
}

/** What a hit came to, and for a click the link it redirects to. */
export type HitResult = { result: Exclude<TrackResult, 'refused'>; url: string } | { result: 'refused' };

export async function recordHit(invoker: Invoker, { kind, token, ...client }: Hit): Promise<HitResult> {
  const claim = readToken(kind, token);
  // A malformed token asks no actor; a click token is signed only over web links, and nothing
  // else (javascript:, data:) is ever redirected to.
  if (!claim || (kind === 'click' && !isWebUrl(claim.url))) return { result: 'refused' };
  const result = await actor(invoker, messageActor, claim.message_id).track({ claim, ...client });
  return result === 'refused' ? { result } : { result, url: claim.url };
}

/**
 * The List-Unsubscribe mailto addresses' tokens, for the inbound MX: checked at RCPT (recording
 * nothing), then an unsubscribe as the one-click POST's, `via: "mailto"`. The client is a mail
 * server, not the person: no user agent or address is kept.
 */
export function mailtoUnsubscribes(invoker: Invoker) {
  return {
    async isToken(token: string): Promise<boolean> {
      const claim = readToken('unsubscribe', token);
      return !!claim && (await actor(invoker, messageActor, claim.message_id).signs(claim));
    },
    async unsubscribe(token: string): Promise<void> {
      // Refused now only if the message was deleted since RCPT: then there is nobody to unsubscribe.
      await recordHit(invoker, { kind: 'unsubscribe', token, user_agent: null, ip: null, via: 'mailto' });
    },
  };
}
