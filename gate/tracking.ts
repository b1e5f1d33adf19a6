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
