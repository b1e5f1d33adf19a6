// BroadcastActor, one per broadcast: its fan-out to an audience, a page of contacts a turn, each
// turn fired by its `page` reminder. A turn reads the next page after the cursor, admits a message
// per contact through the gate (the ContactAdmitter it is handed), and saves the cursor and the
// counts with the next reminder: a crash mid-page saves nothing of the page, and the reminder runs
// it again, where each contact's idempotency key (broadcast and contact) makes the messages
// admitted before the crash replays. So nobody is sent twice, and every count is exact.
//
// Before each page it asks the TenantActor whether a reputation breaker holds broadcasts from its
// From domain: while one is open the broadcast is `paused`, with the breaker's reason, and its
// reminder is set for when the breaker goes half-open.
import { actor, defineActor, type ActorDefinition, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError, type ErrorCode } from '../../errors/errors.catalog.ts';
import { isoTime } from '../../lib/now.ts';
import { domainOf, parseMailbox } from '../../mail/address.ts';
import type { BroadcastState, Catalog } from '../../store/catalog.port.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import {
  stateOf,
  type BroadcastPlan,
  type BroadcastProgress,
  type ContactAdmitter,
  type ContactOutcome,
} from './broadcast.state.ts';

export const BROADCAST_ACTOR = 'BroadcastActor';

const PAGE = 'page';
/** An open breaker is asked again no sooner than this after its half-open time has passed (its own reminder moves it). */
const RECHECK_MS = 1_000;

export interface BroadcastDeps {
  catalog: Catalog;
  admitter: ContactAdmitter;
  /** Contacts a turn: 500 by default. */
  pageSize?: number;
}

const readProgress = (turn: ActorTurn) => turn.get<BroadcastProgress>('progress');

/**
 * Saves the progress, and writes it to the catalog, which `GET /v1/broadcasts/:id` reads without
 * waiting for a page under way. Written in the turn, before its state: a crash after it runs the
 * page again, which admits the same messages again and so writes the same counts.
 */
async function save(turn: ActorTurn, deps: BroadcastDeps, plan: BroadcastPlan, p: BroadcastProgress) {
  turn.set('progress', p);
  await deps.catalog.setBroadcastState(plan.tenant_id, turn.actorId, stateOf(p));
}

function pause(p: BroadcastProgress, reason: string, until: number): BroadcastProgress {
  return { ...p, status: 'paused', paused: { reason, until: new Date(until).toISOString() } };
}

const isRefused = (o: ContactOutcome): o is Extract<ContactOutcome, { refused: ErrorCode }> => 'refused' in o;

/** Refusals that say "not now" rather than "not this contact": the page is tried again later. */
const LATER: ReadonlySet<ErrorCode> = new Set(['rate_limited', 'quota_exceeded', 'idempotency_key_in_flight']);

/** One page of the fan-out: the turn of the `page` reminder. */
async function fanOutPage(turn: ActorTurn, deps: BroadcastDeps): Promise<void> {
  const before = await readProgress(turn);
  if (!before || !['scheduled', 'sending', 'paused'].includes(before.status)) return;
  const plan = (await turn.get<BroadcastPlan>('plan'))!;
  const now = Date.now();
  const started = { ...before, started_at: before.started_at ?? isoTime(now) };

  const domain = domainOf(parseMailbox(plan.content.from)!.address);
  const hold = await actor(turn, tenantActor, plan.tenant_id).broadcastHold({ domain });
  if (hold) {
    const until = Math.max(hold.until, now + RECHECK_MS);
    turn.setReminder(PAGE, until);
    return save(turn, deps, plan, pause(started, hold.reason, until));
  }

  const page = await deps.catalog.listContacts(plan.tenant_id, plan.audience_id, {
    limit: deps.pageSize ?? 500,
    ...(before.cursor ? { cursor: before.cursor } : {}),
  });
  const subscribed = page.data.filter((c) => !c.unsubscribed);
  const outcomes = await deps.admitter.admit(turn.actorId, plan, subscribed);
  const later = outcomes.filter(isRefused).filter((o) => LATER.has(o.refused));
  if (later.length > 0) {
    // Nothing of this page is counted: it runs again, and what it admitted replays then.
    const wait = Math.max(...later.map((o) => o.retry_after ?? 1)) * 1000;
    turn.setReminder(PAGE, now + wait);
    const daily = later.find((o) => o.refused === 'quota_exceeded');
    const waiting = daily ? pause(started, "the tenant's daily send quota is used up", now + wait) : { ...started, paused: null };
    return save(turn, deps, plan, waiting);
  }

  const refused = { ...started.refused, unsubscribed: started.refused.unsubscribed + page.data.length - subscribed.length };
  let admitted = started.admitted;
  for (const o of outcomes) {
    if (!isRefused(o)) admitted++;
    else if (o.refused === 'recipient_suppressed') refused.suppressed++;
    else refused.other++;
  }
  const last = page.next_cursor === null;
  if (!last) turn.setReminder(PAGE, Date.now());
  return save(turn, deps, plan, {
    ...started,
    status: last ? 'sent' : 'sending',
    paused: null,
    cursor: page.next_cursor,
    admitted,
    refused,
    finished_at: last ? isoTime() : null,
  });
}

export function broadcastActor(deps: BroadcastDeps) {
  return defineActor({
    type: BROADCAST_ACTOR,
    methods: {
      /**
       * Sends the broadcast: now, or at `send_at` (its reminder). Once only: a broadcast sent (or
       * scheduled, or cancelled) already is refused, as is one deleted as a draft.
       */
      async send(turn, { plan, send_at }: { plan: BroadcastPlan; send_at: string | null }): Promise<BroadcastState> {
        if (await turn.get<boolean>('discarded')) throw new GatepostError('not_found', 'No broadcast has that id.');
        const sent = await readProgress(turn);
        if (sent) {
          throw new GatepostError('broadcast_already_sent', `The broadcast is ${sent.status}: only a draft can be sent.`);
        }
        const progress: BroadcastProgress = {
          status: send_at ? 'scheduled' : 'sending',
          send_at,
          paused: null,
          started_at: null,
          finished_at: null,
          cursor: null,
          admitted: 0,
          refused: { suppressed: 0, unsubscribed: 0, other: 0 },
        };
        turn.set('plan', plan);
        turn.setReminder(PAGE, send_at ? Date.parse(send_at) : Date.now());
        await save(turn, deps, plan, progress);
        return stateOf(progress);
      },

      /** Stops the fan-out: what was admitted goes on, nobody else is sent to. */
      async cancel(turn): Promise<BroadcastState> {
        const before = await readProgress(turn);
        if (!before || before.status === 'sent' || before.status === 'cancelled') {
          throw new GatepostError(
            'broadcast_not_cancellable',
            before
              ? `The broadcast is ${before.status} already.`
              : 'The broadcast is a draft: delete it instead (DELETE /v1/broadcasts/:id).',
          );
        }
        const plan = (await turn.get<BroadcastPlan>('plan'))!;
        turn.deleteReminder(PAGE);
        const cancelled: BroadcastProgress = { ...before, status: 'cancelled', paused: null, finished_at: isoTime() };
        await save(turn, deps, plan, cancelled);
        return stateOf(cancelled);
      },

      /** Marks a draft deleted, so that no send can follow; refused once it has been sent. */
      async discard(turn): Promise<void> {
        const sent = await readProgress(turn);
        if (sent) throw new GatepostError('broadcast_not_draft', `The broadcast is ${sent.status}: cancel it instead.`);
        turn.set('discarded', true);
      },
    },

    async onReminder(turn, name) {
      if (name === PAGE) await fanOutPage(turn, deps);
    },
  });
}

type BroadcastActorDefinition = ReturnType<typeof broadcastActor>;

/** A client of broadcast `id`'s actor, for callers that do not build the actor (the gate's broadcasts). */
export function broadcastClient(invoker: Invoker, id: string) {
  const definition = { type: BROADCAST_ACTOR } as BroadcastActorDefinition;
  return actor(invoker, definition as ActorDefinition<BroadcastActorDefinition['methods']>, id);
}
