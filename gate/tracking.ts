// The hits on a sent message's links (issue 24): an open, a click or an unsubscribe, each carrying
// a token the message's actor checks against the key it was signed with (mail/tracking.token.ts).
// The ingress never learns which actor holds the message.
//
// An unsubscribe is recorded by the message's actor before it is answered (it suppresses the
// recipient). An open or a click is answered at once: a token its message's actor has found
// signed is kept here a while, with what recording needs of the message, so a link followed
// again asks no actor; the event goes to the recorder (tracking.recorder.ts), which writes many
// messages' at a time.
import { LRUCache } from 'lru-cache';
import { actor, type Invoker, type Publisher } from '../runtime/runtime.port.ts';
import { isWebUrl, readToken, type TokenClaim, type TokenKind } from '../mail/tracking.token.ts';
import { looksMachineMade } from '../mail/tracking.machine.ts';
import { newId } from '../lib/ids.ts';
import { isoTime } from '../lib/now.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import type { TrackResult, UnsubscribeArgs } from '../actors/message/message.state.ts';
import type { Catalog } from '../store/catalog.port.ts';
import { EngagementRecorder } from './tracking.recorder.ts';
import type { MessageOrigin } from '../events/email.event.ts';

/** Opens and clicks recorded per message; later ones are answered but not recorded (docs/tracking.md). */
export const MAX_RECORDED_HITS = 100;
/** How long a checked token, and what is known of its message, is kept. */
const KEPT_MS = 10 * 60_000;
/** The most token characters kept (a click token holds its link): 16 MiB of them. */
const KEPT_TOKEN_CHARS = 16 * 1024 * 1024;
const KEPT_MESSAGES = 100_000;

export interface Hit {
  kind: TokenKind;
  token: string;
  user_agent: string | null;
  ip: string | null;
}

/** What a hit came to, and for a click the link it redirects to. */
export type HitResult = { result: Exclude<TrackResult, 'refused'>; url: string } | { result: 'refused' };

/** What this process knows of a message whose links are being followed, and counts of it. */
interface Engagement {
  tenant_id: string;
  to: string;
  sent_at: number | null;
  /** Opens and clicks recorded so far (MAX_RECORDED_HITS at most), and whether one was an open. */
  hits: number;
  opened: boolean;
  origin?: MessageOrigin;
}

export interface TrackingDeps {
  invoker: Invoker;
  publisher: Publisher;
  catalog: Catalog;
  log: (message: string, error?: unknown) => void;
}

async function unsubscribe(invoker: Invoker, token: string, client: Omit<UnsubscribeArgs, 'claim'>): Promise<HitResult> {
  const claim = readToken('unsubscribe', token);
  if (!claim) return { result: 'refused' };
  const result = await actor(invoker, messageActor, claim.message_id).unsubscribe({ claim, ...client });
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
      return !!claim && (await actor(invoker, messageActor, claim.message_id).trackingFacts(claim)) !== null;
    },
    async unsubscribe(token: string): Promise<void> {
      // Refused now only if the message was deleted since RCPT: then there is nobody to unsubscribe.
      await unsubscribe(invoker, token, { user_agent: null, ip: null, via: 'mailto' });
    },
  };
}

/** Opens, clicks and unsubscribes as the HTTP routes take them; `flush` before the runtime stops. */
export class Tracking {
  /** Tokens found signed, by the message they name. */
  private readonly tokens = new LRUCache<string, string>({
    maxSize: KEPT_TOKEN_CHARS,
    sizeCalculation: (token) => token.length,
    ttl: KEPT_MS,
  });
  private readonly messages = new LRUCache<string, Engagement>({ max: KEPT_MESSAGES, ttl: KEPT_MS });
  /** A message's first look-up, shared by the hits that arrive while it is under way. */
  private readonly lookingUp = new Map<string, Promise<Engagement | null>>();
  private readonly recorder: EngagementRecorder;

  constructor(private readonly deps: TrackingDeps) {
    this.recorder = new EngagementRecorder(deps.publisher, deps.log);
  }

  /** An open or a click: answered once the token is known signed; recorded a moment later. */
  async hit({ kind, token, user_agent, ip }: Hit): Promise<HitResult> {
    const claim = readToken(kind, token);
    // A malformed token asks no actor; a click token is signed only over web links, and nothing
    // else (javascript:, data:) is ever redirected to.
    if (!claim || (kind === 'click' && !isWebUrl(claim.url))) return { result: 'refused' };
    const message = this.tokens.get(token) === claim.message_id ? this.messages.get(claim.message_id) : undefined;
    const engagement = message ?? (await this.lookUp(token, claim));
    if (!engagement) return { result: 'refused' };
    if (engagement.hits >= MAX_RECORDED_HITS) return { result: 'repeat', url: claim.url };
    engagement.hits++;
    const now = Date.now();
    const data =
      kind === 'open'
        ? {
            to: engagement.to,
            user_agent,
            ip,
            first: !engagement.opened,
            machine: looksMachineMade(user_agent, now, engagement.sent_at),
          }
        : { to: engagement.to, url: claim.url, user_agent, ip };
    if (kind === 'open') engagement.opened = true;
    this.recorder.add({
      tenant_id: engagement.tenant_id,
      message_id: claim.message_id,
      event: { id: newId('evt'), type: kind === 'open' ? 'email.opened' : 'email.clicked', created_at: isoTime(now), data },
      ...(engagement.origin ? { origin: engagement.origin } : {}),
    });
    return { result: 'recorded', url: claim.url };
  }

  /** An unsubscribe, recorded (and the recipient suppressed) by the message's actor before it answers. */
  unsubscribe(token: string, client: Omit<UnsubscribeArgs, 'claim'>): Promise<HitResult> {
    return unsubscribe(this.deps.invoker, token, client);
  }

  /** Records what waits (the server is stopping): resolves once it is durable. */
  flush(): Promise<void> {
    return this.recorder.flush();
  }

  private lookUp(token: string, claim: TokenClaim): Promise<Engagement | null> {
    let pending = this.lookingUp.get(token);
    if (!pending) {
      pending = this.factsOf(token, claim).finally(() => this.lookingUp.delete(token));
      this.lookingUp.set(token, pending);
    }
    return pending;
  }

  /** Asks the message's actor whether the token is signed; the first time, counts what is recorded of the message. */
  private async factsOf(token: string, claim: TokenClaim): Promise<Engagement | null> {
    const facts = await actor(this.deps.invoker, messageActor, claim.message_id).trackingFacts(claim);
    if (!facts) return null;
    let engagement = this.messages.get(claim.message_id);
    if (!engagement) {
      const recorded = await this.deps.catalog.engagementOf(claim.message_id);
      // Another token of the message may have been looked up meanwhile: its counts stand.
      engagement = this.messages.get(claim.message_id) ?? {
        tenant_id: facts.tenant_id,
        to: facts.to,
        sent_at: facts.sent_at === null ? null : Date.parse(facts.sent_at),
        ...(facts.origin ? { origin: facts.origin } : {}),
        hits: recorded.length,
        opened: recorded.some((e) => e.type === 'email.opened'),
      };
      this.messages.set(claim.message_id, engagement);
    }
    this.tokens.set(token, claim.message_id);
    return engagement;
  }
}
