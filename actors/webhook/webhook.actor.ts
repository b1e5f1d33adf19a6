// WebhookActor, one per endpoint (id = the whk_ id): the events owed to the endpoint, their
// attempts, backoff and outcomes. It never makes the HTTP request inside a turn: `begin` marks an
// attempt in flight (a short turn), the request happens outside any turn (fanout.ts, in the lanes
// of webhooks/webhook.lanes.ts), and `finish` records the outcome (another short turn). So
// enqueueing new events never waits on a slow receiver, and each endpoint has its own actor: one
// dead endpoint delays no other.
//
// Every event has one reminder, `e:<evt id>`, always armed while it is owed: the next retry, or
// the end of an attempt's lease (an attempt whose process died is then counted and made again,
// with the same evt_ id: at-least-once), or a watchdog re-publishing an event whose attempt never
// began; once the event is settled, the same reminder tells the timeline if it could not be told
// at once, and finally drops the state.
import { actor, defineActor, type ActorDefinition, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Catalog, WebhookDisabledReason } from '../../store/catalog.port.ts';
import type { WebhookEnvelope } from '../../events/email.event.ts';
import { messageActor } from '../message/message.actor.ts';
import {
  eventKey,
  JITTER,
  KEEP_DELIVERED_MS,
  KEEP_FAILED_MS,
  LEASE_MARGIN_MS,
  LOG_SIZE,
  logKey,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  MAX_WATCH_MS,
  WATCH_MS,
  WEBHOOK_DUE,
  type AttemptLogEntry,
  type AttemptOutcome,
  type BegunAttempt,
  type EventState,
  type TimelineNote,
  type WebhookDue,
  type WebhookMeta,
} from './webhook.state.ts';

export const WEBHOOK_ACTOR = 'WebhookActor';

/** How many attempts an endpoint's log keeps: its deliveries list answers at most this many. */
export { LOG_SIZE };

/** Told again this long after the timeline could not be told. */
const TIMELINE_RETRY_MS = 5_000;
/** How early a due event may begin (clocks of actor hosts differ a little). */
const DUE_SLACK_MS = 1_000;

export interface WebhookActorDeps {
  catalog: Catalog;
  /** Waits between attempts, ms; attempts = waits + 1, at most MAX_ATTEMPTS. */
  retrySchedule: number[];
  /** One attempt's deadline, ms. */
  timeoutMs: number;
  /** An endpoint failing with no success this long is disabled. */
  disableAfterMs: number;
  /** For tests: the jitter's dice. */
  random?: () => number;
}

export const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

export function webhookActor(deps: WebhookActorDeps) {
  const random = deps.random ?? Math.random;
  const maxAttempts = Math.min(MAX_ATTEMPTS, deps.retrySchedule.length + 1);

  /**
   * Publishes the event as due, and arms its watchdog in case the publication comes to nothing:
   * in `watchMs`, then (if it fires) every `nextWatchMs`.
   */
  function due(turn: ActorTurn, eventId: string, watchMs: number, nextWatchMs = watchMs): void {
    turn.publish(WEBHOOK_DUE, { endpoint_id: turn.actorId, event_id: eventId } satisfies WebhookDue);
    turn.setReminder(eventKey(eventId), Date.now() + watchMs, { watch: nextWatchMs });
  }

  async function meta(turn: ActorTurn): Promise<WebhookMeta> {
    return (await turn.get<WebhookMeta>('meta')) ?? { logged: 0, failing_since: null };
  }

  /** Tells the message's timeline; keeps the note for the reminder when it cannot. */
  async function tell(turn: ActorTurn, s: EventState): Promise<void> {
    const note = s.untold;
    if (!note) return;
    const { message_id, ...outcome } = note;
    try {
      await actor(turn, messageActor, message_id).recordWebhook(outcome);
      delete s.untold;
    } catch (error) {
      // The message is gone (its retention ended): there is no timeline left to tell.
      if (error instanceof GatepostError && error.code === 'not_found') delete s.untold;
    }
  }

  /** Arms the settled event's reminder: soon while the timeline waits to be told, else when it goes. */
  function armSettled(turn: ActorTurn, eventId: string, s: EventState): void {
    turn.setReminder(eventKey(eventId), s.untold ? Date.now() + TIMELINE_RETRY_MS : s.keep_until!);
  }

  /** The wait after attempt `attempt`, with jitter, and no shorter than a Retry-After. */
  function waitAfter(attempt: number, retryAfterMs: number | null): number {
    const base = deps.retrySchedule[Math.min(attempt, deps.retrySchedule.length) - 1] ?? 0;
    const jittered = Math.round(base * (1 + (random() * 2 - 1) * JITTER));
    return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  }

  /** Records an attempt's outcome: the log, the endpoint's health, and what becomes of the event. */
  async function settle(turn: ActorTurn, eventId: string, s: EventState, o: AttemptOutcome, retryAtOnce = false) {
    const now = Date.now();
    const m = await meta(turn);
    const delivered = isSuccess(o.status_code) && !o.skipped;
    let disable: WebhookDisabledReason | null = null;
    if (delivered) {
      m.failing_since = null;
    } else if (!o.skipped) {
      m.failing_since ??= Date.parse(o.at);
      if (o.status_code === 410) disable = 'gone';
      else if (now - m.failing_since >= deps.disableAfterMs) disable = 'failing';
    }
    if (disable) await deps.catalog.disableWebhook(s.tenant_id, turn.actorId, disable);

    s.attempts = o.attempt;
    s.lease_until = null;
    const final = delivered || o.skipped !== undefined || disable !== null || s.attempts >= s.max_attempts;
    let error = o.error;
    if (disable === 'gone') error = `${error}: the endpoint is gone, and is now disabled`;
    if (disable === 'failing')
      error = `${error}: the endpoint has failed since ${new Date(m.failing_since!).toISOString()}, and is now disabled`;
    const type = s.event?.type ?? 'unknown';
    if (final) {
      s.status = delivered ? 'delivered' : 'failed';
      s.keep_until = now + (delivered ? KEEP_DELIVERED_MS : KEEP_FAILED_MS);
      const messageId = s.event?.data.message_id;
      if (typeof messageId === 'string') {
        s.untold = {
          message_id: messageId,
          delivered,
          endpoint_id: turn.actorId,
          event_id: eventId,
          event_type: type,
          attempts: s.attempts,
          status_code: o.status_code,
          error,
        } satisfies TimelineNote;
        await tell(turn, s);
      }
      if (delivered) s.event = null;
      armSettled(turn, eventId, s);
    } else {
      s.status = 'pending';
      s.next_at = now + (retryAtOnce ? 0 : waitAfter(s.attempts, o.retry_after_ms));
      if (retryAtOnce) due(turn, eventId, WATCH_MS);
      else turn.setReminder(eventKey(eventId), s.next_at, { watch: WATCH_MS });
    }
    const entry: AttemptLogEntry = {
      event_id: eventId,
      event_type: type,
      attempt: o.attempt,
      at: o.at,
      duration_ms: o.duration_ms,
      status_code: o.status_code,
      error,
      result: delivered ? 'delivered' : final ? 'failed' : 'retrying',
      next_attempt_at: final ? null : new Date(s.next_at).toISOString(),
    };
    turn.set(logKey(m.logged), entry);
    m.logged++;
    turn.set('meta', m);
    turn.set(eventKey(eventId), s);
  }

  return defineActor({
    type: WEBHOOK_ACTOR,
    methods: {
      /**
       * Takes an event for the endpoint, once: a repeat of an evt_ id it has (pub/sub redelivers)
       * changes nothing. The event is published as due, unless the caller says it hands the event
       * to its own lanes (`publish: false`); either way its watchdog reminder is armed.
       */
      async enqueue(
        turn,
        args: { tenant_id: string; event: WebhookEnvelope; publish?: boolean },
      ): Promise<{ enqueued: boolean }> {
        const key = eventKey(args.event.id);
        if (await turn.get<EventState>(key)) return { enqueued: false };
        turn.set(key, {
          tenant_id: args.tenant_id,
          event: args.event,
          status: 'pending',
          attempts: 0,
          max_attempts: maxAttempts,
          next_at: Date.now(),
          lease_until: null,
          keep_until: null,
        } satisfies EventState);
        if (args.publish === false) turn.setReminder(key, Date.now() + WATCH_MS, { watch: WATCH_MS });
        else due(turn, args.event.id, WATCH_MS);
        return { enqueued: true };
      },

      /** Marks the event's next attempt in flight, if it is due and not under way; null when there is nothing to do. */
      async begin(turn, args: { event_id: string }): Promise<BegunAttempt | null> {
        const key = eventKey(args.event_id);
        const s = await turn.get<EventState>(key);
        if (!s || s.status !== 'pending' || !s.event || s.next_at > Date.now() + DUE_SLACK_MS) return null;
        s.status = 'in_flight';
        s.lease_until = Date.now() + deps.timeoutMs + LEASE_MARGIN_MS;
        turn.set(key, s);
        turn.setReminder(key, s.lease_until);
        return { tenant_id: s.tenant_id, event: s.event, attempt: s.attempts + 1 };
      },

      /** Records the outcome of the attempt `begin` handed out. A late one (its lease ran out, it was counted) is dropped. */
      async finish(turn, outcome: AttemptOutcome): Promise<void> {
        const key = eventKey(outcome.event_id);
        const s = await turn.get<EventState>(key);
        if (!s || s.status !== 'in_flight' || s.attempts + 1 !== outcome.attempt) return;
        if (outcome.skipped === 'deleted') {
          turn.delete(key);
          turn.deleteReminder(key);
          return;
        }
        await settle(turn, outcome.event_id, s, outcome);
      },

      /** The last attempts, newest first. */
      async deliveries(turn, args: { limit?: number } = {}): Promise<AttemptLogEntry[]> {
        const m = await meta(turn);
        const limit = Math.min(args?.limit ?? LOG_SIZE, LOG_SIZE, m.logged);
        const out: AttemptLogEntry[] = [];
        for (let n = m.logged - 1; n >= m.logged - limit; n--) {
          const entry = await turn.get<AttemptLogEntry>(logKey(n));
          if (entry) out.push(entry);
        }
        return out;
      },

      /** A failed event, one more attempt now (by hand). */
      async redeliver(turn, args: { event_id: string }): Promise<WebhookEnvelope> {
        const key = eventKey(args.event_id);
        const s = await turn.get<EventState>(key);
        if (s && s.status !== 'failed') {
          throw new GatepostError('webhook_delivery_not_failed', `The event ${args.event_id} is ${s.status.replace('_', ' ')}.`);
        }
        if (!s?.event) throw new GatepostError('not_found', `No failed delivery of ${args.event_id} is kept for this endpoint.`);
        s.status = 'pending';
        s.max_attempts = s.attempts + 1;
        s.next_at = Date.now();
        s.keep_until = null;
        turn.set(key, s);
        due(turn, args.event_id, WATCH_MS);
        return s.event;
      },

      /** The endpoint was enabled again: its failures so far no longer count towards disabling it. */
      async reset(turn): Promise<void> {
        const m = await meta(turn);
        if (m.failing_since === null) return;
        turn.set('meta', { ...m, failing_since: null } satisfies WebhookMeta);
      },

      /** The endpoint was deleted: its log goes (events still owed are dropped as their reminders fire). */
      async forget(turn): Promise<void> {
        turn.delete('meta');
        for (let n = 0; n < LOG_SIZE; n++) turn.delete(logKey(n));
      },
    },

    async onReminder(turn, name, data) {
      if (!name.startsWith('e:')) return;
      const eventId = name.slice(2);
      const s = await turn.get<EventState>(name);
      // No state: settled and dropped, or the turn that set this reminder never saved (Dapr
      // registers a turn's reminders before its state).
      if (!s) return;
      const now = Date.now();
      switch (s.status) {
        case 'pending': {
          if (s.next_at > now) return turn.setReminder(name, s.next_at, { watch: WATCH_MS });
          const watch = (data as { watch?: number } | undefined)?.watch ?? WATCH_MS;
          return due(turn, eventId, watch, Math.min(watch * 2, MAX_WATCH_MS));
        }
        case 'in_flight': {
          if (s.lease_until !== null && s.lease_until > now) return turn.setReminder(name, s.lease_until);
          // The process making the attempt died (or lost its way): it may have reached the
          // receiver. It counts, and it is made again at once, with the same evt_ id.
          return settle(
            turn,
            eventId,
            s,
            {
              event_id: eventId,
              attempt: s.attempts + 1,
              at: new Date(now).toISOString(),
              duration_ms: 0,
              status_code: null,
              error: 'cut short: the attempt did not finish (Gatepost stopped during it); made again',
              retry_after_ms: null,
            },
            true,
          );
        }
        default: {
          if (s.untold) {
            await tell(turn, s);
            turn.set(name, s);
            return armSettled(turn, eventId, s);
          }
          if (s.keep_until !== null && s.keep_until > now) return turn.setReminder(name, s.keep_until);
          turn.delete(name);
        }
      }
    },
  });
}

export type WebhookActorDefinition = ReturnType<typeof webhookActor>;

/** A typed client of one endpoint's actor, for callers that do not host it (the REST API, the lanes). */
export function webhookClient(invoker: Invoker, endpointId: string) {
  const definition = { type: WEBHOOK_ACTOR } as WebhookActorDefinition;
  return actor(invoker, definition as ActorDefinition<WebhookActorDefinition['methods']>, endpointId);
}
