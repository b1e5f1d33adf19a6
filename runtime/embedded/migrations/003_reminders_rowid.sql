-- Reminders in a rowid table. In the WITHOUT ROWID table of 001 the rows sit in key order, so a
-- message's reminder (its actor id derived from an idempotency key, spread at random) dirtied a
-- page of its own when it was set and the same random page again when it moved: some 9 KB of
-- log per message. Here the row sits in insertion order; moving it rewrites that page (shared
-- by the reminders set together) and the due index, not the key's. (actor, name) stays unique.
CREATE TABLE reminders_rows (
  actor_type TEXT NOT NULL,
  actor_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  due_at     INTEGER NOT NULL,
  data       TEXT,
  UNIQUE (actor_type, actor_id, name)
);
INSERT INTO reminders_rows (actor_type, actor_id, name, due_at, data)
  SELECT actor_type, actor_id, name, due_at, data FROM reminders ORDER BY due_at;
DROP TABLE reminders;
ALTER TABLE reminders_rows RENAME TO reminders;
CREATE INDEX reminders_due ON reminders (due_at);
