// Applying a group of writes to the actor store in one transaction: what the writer thread runs.
// Later writes to the same key win, so each key is written once per group.
import type { Db } from '../../lib/sqlite.ts';

export type Write =
  | { kind: 'state'; actorType: string; actorId: string; key: string; value: string | null }
  | { kind: 'reminder'; actorType: string; actorId: string; name: string; dueAt: number; data: string | null }
  | { kind: 'reminderDelete'; actorType: string; actorId: string; name: string }
  | { kind: 'outbox'; seq: number; deliveryId: string; topic: string; data: string }
  | { kind: 'outboxDone'; seq: number };

/**
 * Writes as they are posted to the writer thread: one flat array, each write its kind's code and
 * then its fields in a fixed order. Cloning one array of strings and numbers costs the event loop
 * about half what cloning an object a write does (each object's property names are written out
 * again); the event loop is what sets Gatepost's pace.
 */
export type EncodedWrites = (string | number | null)[];

const enum Code {
  State,
  Reminder,
  ReminderDelete,
  Outbox,
  OutboxDone,
}

export function encodeWrites(writes: readonly Write[], into: EncodedWrites): void {
  for (const w of writes) {
    switch (w.kind) {
      case 'state':
        into.push(Code.State, w.actorType, w.actorId, w.key, w.value);
        break;
      case 'reminder':
        into.push(Code.Reminder, w.actorType, w.actorId, w.name, w.dueAt, w.data);
        break;
      case 'reminderDelete':
        into.push(Code.ReminderDelete, w.actorType, w.actorId, w.name);
        break;
      case 'outbox':
        into.push(Code.Outbox, w.seq, w.deliveryId, w.topic, w.data);
        break;
      case 'outboxDone':
        into.push(Code.OutboxDone, w.seq);
        break;
    }
  }
}

export function decodeWrites(encoded: EncodedWrites): Write[] {
  const writes: Write[] = [];
  const str = (i: number) => encoded[i] as string;
  const num = (i: number) => encoded[i] as number;
  for (let i = 0; i < encoded.length;) {
    switch (encoded[i] as Code) {
      case Code.State:
        writes.push({
          kind: 'state',
          actorType: str(i + 1),
          actorId: str(i + 2),
          key: str(i + 3),
          value: encoded[i + 4] as string | null,
        });
        i += 5;
        break;
      case Code.Reminder:
        writes.push({
          kind: 'reminder',
          actorType: str(i + 1),
          actorId: str(i + 2),
          name: str(i + 3),
          dueAt: num(i + 4),
          data: encoded[i + 5] as string | null,
        });
        i += 6;
        break;
      case Code.ReminderDelete:
        writes.push({ kind: 'reminderDelete', actorType: str(i + 1), actorId: str(i + 2), name: str(i + 3) });
        i += 4;
        break;
      case Code.Outbox:
        writes.push({ kind: 'outbox', seq: num(i + 1), deliveryId: str(i + 2), topic: str(i + 3), data: str(i + 4) });
        i += 5;
        break;
      case Code.OutboxDone:
        writes.push({ kind: 'outboxDone', seq: num(i + 1) });
        i += 2;
        break;
      default:
        throw new Error(`unknown write code ${String(encoded[i])} at ${i}`);
    }
  }
  return writes;
}

export function writeApplier(db: Db): (writes: Write[]) => void {
  const s = {
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
  return db.transaction((writes: Write[]) => {
    const latest = new Map<string, Write>();
    const outbox: Write[] = [];
    for (const w of writes) {
      if (w.kind === 'state') latest.set(`s\0${w.actorType}\0${w.actorId}\0${w.key}`, w);
      else if (w.kind === 'reminder' || w.kind === 'reminderDelete') latest.set(`r\0${w.actorType}\0${w.actorId}\0${w.name}`, w);
      else outbox.push(w);
    }
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
    // Outbox rows in order: a row inserted and acknowledged in one group is inserted, then deleted.
    for (const w of outbox) {
      if (w.kind === 'outbox') s.insertOutbox.run(w.seq, w.deliveryId, w.topic, w.data);
      else if (w.kind === 'outboxDone') s.deleteOutbox.run(w.seq);
    }
  });
}
