// Applying a group of writes to the actor store in one transaction: what the writer thread
// (lib/committer.worker.ts) runs. Later writes to the same key win, so each key is written once
// per group.
import type { Applier, EncodedWrites } from '../../lib/committer.ts';
import type { Db } from '../../lib/sqlite.ts';

export type { EncodedWrites };

export type Write =
  | { kind: 'state'; actorType: string; actorId: string; key: string; value: string | null }
  | { kind: 'reminder'; actorType: string; actorId: string; name: string; dueAt: number; data: string | null }
  | { kind: 'reminderDelete'; actorType: string; actorId: string; name: string }
  | { kind: 'outbox'; seq: number; deliveryId: string; topic: string; data: string }
  | { kind: 'outboxDone'; seq: number };

// Writes as they are posted to the writer thread: one flat array, each write its kind's code and
// then its fields in a fixed order. Cloning one array of strings and numbers costs the event loop
// about half what cloning an object a write does (each object's property names are written out
// again); the event loop is what sets Gatepost's pace.

type Kind = Write['kind'];
type Field = string | number | null;

// Each kind's fields in the order they are posted; a kind's code is its index. Encoding and
// decoding both read this table, so they cannot disagree.
const LAYOUTS: readonly { [K in Kind]: readonly [K, readonly Exclude<keyof Extract<Write, { kind: K }>, 'kind'>[]] }[Kind][] = [
  ['state', ['actorType', 'actorId', 'key', 'value']],
  ['reminder', ['actorType', 'actorId', 'name', 'dueAt', 'data']],
  ['reminderDelete', ['actorType', 'actorId', 'name']],
  ['outbox', ['seq', 'deliveryId', 'topic', 'data']],
  ['outboxDone', ['seq']],
];
const CODES = new Map<Kind, number>(LAYOUTS.map(([kind], code) => [kind, code]));

const [STATE, REMINDER, REMINDER_DELETE, OUTBOX, OUTBOX_DONE] = (
  ['state', 'reminder', 'reminderDelete', 'outbox', 'outboxDone'] as const
).map((kind) => CODES.get(kind)!);

/**
 * Appends one write to `into`: its kind's code, then its fields in that kind's LAYOUTS order (the
 * tests decode every kind back). A turn's writes go straight into what is posted, with no object
 * made a write. Each answers `into`.
 */
export const encode = {
  state(into: EncodedWrites, actorType: string, actorId: string, key: string, value: string | null): EncodedWrites {
    into.push(STATE!, actorType, actorId, key, value);
    return into;
  },
  reminder(
    into: EncodedWrites,
    actorType: string,
    actorId: string,
    name: string,
    dueAt: number,
    data: string | null,
  ): EncodedWrites {
    into.push(REMINDER!, actorType, actorId, name, dueAt, data);
    return into;
  },
  reminderDelete(into: EncodedWrites, actorType: string, actorId: string, name: string): EncodedWrites {
    into.push(REMINDER_DELETE!, actorType, actorId, name);
    return into;
  },
  outbox(into: EncodedWrites, seq: number, deliveryId: string, topic: string, data: string): EncodedWrites {
    into.push(OUTBOX!, seq, deliveryId, topic, data);
    return into;
  },
  outboxDone(into: EncodedWrites, seq: number): EncodedWrites {
    into.push(OUTBOX_DONE!, seq);
    return into;
  },
};

export function decodeWrites(encoded: EncodedWrites): Write[] {
  const writes: Write[] = [];
  for (let i = 0; i < encoded.length;) {
    const layout = LAYOUTS[encoded[i] as number];
    if (!layout) throw new Error(`unknown write code ${String(encoded[i])} at ${i}`);
    const w: Record<string, Field> = { kind: layout[0] };
    for (const field of layout[1]) w[field] = encoded[++i] as Field;
    i++;
    writes.push(w as unknown as Write);
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

/** The writer thread's entry (lib/committer.ts): a group's encoded writes, decoded and applied. */
export const applier: Applier = (db) => {
  const apply = writeApplier(db);
  return { apply: (writes) => apply(decodeWrites(writes)) };
};
