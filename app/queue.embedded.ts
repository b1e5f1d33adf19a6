// The queue as the embedded runtime holds it, read for GET /metrics: per tenant, the messages
// scheduled (their MessageActor's `send` reminder), ready (a `message.ready` publication in the
// outbox: not yet dispatched, or held while its message waits or is in flight in the fair queue)
// and deferred (their DeliveryActor's `retry` reminder: a retry, or a hold). And each tenant's
// reputation breaker, from its TenantActor's state. Read on a read-only connection of its own to
// actors.db, at scrape time only: its cost grows with the messages waiting, never with the
// messages kept (the waiting reminders have a partial index of their own, `reminders_waiting`;
// each joins its record by the actor state's unique index). Without that index a scrape read
// every reminder: about 37 ms a scrape with 60,000 messages kept, 18 us of CPU a send in
// bench:send --observability (2026-11-28). A ready message is counted from its publication
// alone, which names its tenant and when it came to the queue: joined to its record (a JSON text
// of about a kilobyte parsed twice a row), a scrape under bench:send's burst read 30-140 ms with
// 1,000-7,700 captures waiting, about a twelfth of a core at a scrape a second (2026-11-29). The
// reads run on a thread of their own (queue.embedded.worker.ts): under a burst one took about
// 27 ms, held the event loop, and put every scrape into the sends' p99 (2026-11-27).
import Database from 'better-sqlite3';
import { jobThread } from '../lib/thread.ts';
import { DELIVERY_ACTOR } from '../actors/delivery/delivery.actor.ts';
import { TENANT_ACTOR } from '../actors/tenant/tenant.actor.ts';
import type { BreakerStatus } from '../actors/tenant/reputation.state.ts';
import { MESSAGE_ACTOR, MESSAGE_READY } from '../actors/message/message.actor.ts';
import type { TenantQueue } from '../ops/metrics.prom.ts';

/**
 * The term of the partial index `reminders_waiting` (runtime/embedded/migrations/002), word for
 * word: SQLite uses a partial index only for a query that repeats its term.
 */
const WAITING = `name IN ('send', 'retry', 'queued')`;

/**
 * The plan is fixed, not left to the planner (the file has no statistics, and without them it
 * read every message's state and every reminder): each reminder arm reads its reminders through
 * the index named (`INDEXED BY` fails the query rather than read another way), and CROSS JOIN
 * makes the waiting messages the outer loop, each joining its record. The ready arm reads the
 * outbox alone, a message handed over twice counted once. `since` is in ms since the epoch: a
 * ready message's arrival in the queue (its send_at, if it had one), a deferred one's creation.
 */
export const QUEUE_SQL = `
  WITH waiting (tenant_id, state, since) AS (
    SELECT json_extract(s.value, '$.tenant_id'), 'scheduled', NULL
    FROM reminders r INDEXED BY reminders_waiting
    CROSS JOIN actor_state s ON s.actor_type = @message AND s.actor_id = r.actor_id AND s.key = 'record'
    WHERE r.actor_type = @message AND r.name = 'send' AND r.${WAITING}
    UNION ALL
    SELECT json_extract(s.value, '$.tenant_id'), 'deferred', unixepoch(json_extract(s.value, '$.created_at'), 'subsec') * 1000
    FROM reminders r INDEXED BY reminders_waiting
    CROSS JOIN actor_state s ON s.actor_type = @message AND s.actor_id = r.actor_id AND s.key = 'record'
    WHERE r.actor_type = @delivery AND r.name = 'retry' AND r.${WAITING}
    UNION ALL
    SELECT json_extract(data, '$.tenant_id'), 'ready', min(json_extract(data, '$.queued_at'))
    FROM outbox WHERE topic = @ready GROUP BY json_extract(data, '$.message_id')
  )
  SELECT tenant_id,
         sum(state = 'scheduled') AS scheduled,
         sum(state = 'ready') AS ready,
         sum(state = 'deferred') AS deferred,
         min(since) AS oldest
  FROM waiting
  GROUP BY 1`;

const BREAKERS_SQL = `
  SELECT actor_id AS tenant_id, json_extract(value, '$.status') AS status
  FROM actor_state WHERE actor_type = @tenant AND key = 'reputation'`;

interface Row {
  tenant_id: string;
  scheduled: number;
  ready: number;
  deferred: number;
  /** ms since the epoch. */
  oldest: number | null;
}

export type QueueRead = { of: 'queue' } | { of: 'breakers' };
export type Breaker = { tenant_id: string; status: BreakerStatus };

/** The reads on `file` (the runtime must have created it), in the calling thread. */
export function queueReader(file: string): { queue(): TenantQueue[]; breakers(): Breaker[] } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const query = db.prepare<{ message: string; delivery: string; ready: string }, Row>(QUEUE_SQL);
  const names = { message: MESSAGE_ACTOR, delivery: DELIVERY_ACTOR, ready: MESSAGE_READY };
  const breakers = db.prepare<{ tenant: string }, Breaker>(BREAKERS_SQL);
  return {
    queue() {
      const now = Date.now();
      return query.all(names).map((r) => ({
        tenant_id: r.tenant_id,
        scheduled: r.scheduled,
        ready: r.ready,
        deferred: r.deferred,
        oldest_age_seconds: r.oldest === null ? 0 : Math.max(0, (now - r.oldest) / 1000),
      }));
    },
    breakers: () => breakers.all({ tenant: TENANT_ACTOR }),
  };
}

/** The reads on `file`, on their thread; `close` when the runtime stops. */
export function embeddedQueue(file: string): {
  read(): Promise<TenantQueue[]>;
  breakers(): Promise<Breaker[]>;
  close(): Promise<void>;
} {
  const thread = jobThread<QueueRead, TenantQueue[] | Breaker[]>(import.meta.url, 'queue.embedded.worker', {
    workerData: { file },
  });
  return {
    read: () => thread.run({ of: 'queue' }) as Promise<TenantQueue[]>,
    breakers: () => thread.run({ of: 'breakers' }) as Promise<Breaker[]>,
    close: () => thread.close(),
  };
}
