// Group commit: the writes of every turn that ends in one event-loop tick go to disk in one
// transaction and one fsync. Batches are committed in the order they were enqueued, so a turn
// may read state that an earlier turn wrote but has not yet made durable: if the process dies,
// the earlier turn is lost too, and neither answer has gone out (answers wait for `durable`).
import type { Db } from '../../lib/sqlite.ts';

export type Write =
  | { kind: 'state'; actorType: string; actorId: string; key: string; value: string | null }
  | { kind: 'reminder'; actorType: string; actorId: string; name: string; dueAt: number; data: string | null }
  | { kind: 'reminderDelete'; actorType: string; actorId: string; name: string }
  | { kind: 'outbox'; seq: number; deliveryId: string; topic: string; data: string }
  | { kind: 'outboxDone'; seq: number };

interface Pending {
  seq: number;
  writes: Write[];
  afterCommit?: () => void;
}

export class GroupCommitter {
  private queue: Pending[] = [];
  private lastEnqueued = 0;
  private lastDurable = 0;
  private waiters: { seq: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private flushScheduled = false;
  private failure: unknown = null;
  private readonly statements;

  constructor(
    private readonly db: Db,
    private readonly onFatal: (error: unknown) => void,
  ) {
    this.statements = {
      upsertState: db.prepare(
        `INSERT INTO actor_state (actor_type, actor_id, key, value) VALUES (?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET value = excluded.value`,
      ),
      deleteState: db.prepare('DELETE FROM actor_state WHERE actor_type = ? AND actor_id = ? AND key = ?'),
      upsertReminder: db.prepare(
        `INSERT INTO reminders (actor_type, actor_id, name, due_at, data) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET due_at = excluded.due_at, data = excluded.data`,
      ),
      deleteReminder: db.prepare('DELETE FROM reminders WHERE actor_type = ? AND actor_id = ? AND name = ?'),
      insertOutbox: db.prepare('INSERT INTO outbox (seq, delivery_id, topic, data) VALUES (?, ?, ?, ?)'),
      deleteOutbox: db.prepare('DELETE FROM outbox WHERE seq = ?'),
    };
  }

  /** The sequence number of the newest enqueued batch; `durable(it)` waits for everything so far. */
  get head(): number {
    return this.lastEnqueued;
  }

  get durableHead(): number {
    return this.lastDurable;
  }

  enqueue(writes: Write[], afterCommit?: () => void): number {
    if (this.failure) throw this.failure;
    const seq = ++this.lastEnqueued;
    this.queue.push({ seq, writes, afterCommit });
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return seq;
  }

  durable(seq: number = this.lastEnqueued): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (seq <= this.lastDurable) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ seq, resolve, reject }));
  }

  /** Commits everything enqueued so far, synchronously. */
  flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    try {
      this.db.transaction(() => this.apply(batch))();
    } catch (error) {
      // The in-memory actor state already reflects these writes; carrying on would let it drift
      // from disk. A failed commit (disk full, I/O error) stops the runtime, as a database would.
      this.failure = error;
      for (const w of this.waiters) w.reject(error);
      this.waiters = [];
      this.onFatal(error);
      return;
    }
    this.lastDurable = batch[batch.length - 1]!.seq;
    for (const p of batch) p.afterCommit?.();
    let done = 0;
    while (done < this.waiters.length && this.waiters[done]!.seq <= this.lastDurable) done++;
    const ready = this.waiters.splice(0, done);
    for (const w of ready) w.resolve();
  }

  private apply(batch: Pending[]): void {
    // Later writes to the same key win; only the last one is written.
    const latest = new Map<string, Write>();
    const outbox: Write[] = [];
    for (const p of batch) {
      for (const w of p.writes) {
        switch (w.kind) {
          case 'state':
            latest.set(`s\0${w.actorType}\0${w.actorId}\0${w.key}`, w);
            break;
          case 'reminder':
          case 'reminderDelete':
            latest.set(`r\0${w.actorType}\0${w.actorId}\0${w.name}`, w);
            break;
          default:
            outbox.push(w);
        }
      }
    }
    const s = this.statements;
    for (const w of latest.values()) {
      if (w.kind === 'state') {
        if (w.value === null) s.deleteState.run(w.actorType, w.actorId, w.key);
        else s.upsertState.run(w.actorType, w.actorId, w.key, w.value);
      } else if (w.kind === 'reminder') {
        s.upsertReminder.run(w.actorType, w.actorId, w.name, w.dueAt, w.data);
      } else if (w.kind === 'reminderDelete') {
        s.deleteReminder.run(w.actorType, w.actorId, w.name);
      }
    }
    for (const w of outbox) {
      if (w.kind === 'outbox') s.insertOutbox.run(w.seq, w.deliveryId, w.topic, w.data);
      else if (w.kind === 'outboxDone') s.deleteOutbox.run(w.seq);
    }
  }
}
