-- Actor state, one row per (actor, key); values are JSON. A rowid table, not WITHOUT ROWID: keyed
-- by (actor, key), a value over about 1 KB (a message's record) spilled onto an overflow page of
-- its own, mostly empty, some 5 KB of file per message; a rowid table keeps values up to about
-- 4 KB in its leaf pages.
CREATE TABLE actor_state (
  actor_type TEXT NOT NULL,
  actor_id   TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  UNIQUE (actor_type, actor_id, key)
);

-- One-shot reminders; a reminder is deleted by the turn it fires unless that turn sets it again.
-- A rowid table too: in key order, a message's reminder (its actor id spread at random) dirtied a
-- page of its own when set and again when moved, some 9 KB of log per message; in insertion
-- order, moving it rewrites a page shared by the reminders set together, and the due index.
CREATE TABLE reminders (
  actor_type TEXT NOT NULL,
  actor_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  due_at     INTEGER NOT NULL,
  data       TEXT,
  UNIQUE (actor_type, actor_id, name)
);
CREATE INDEX reminders_due ON reminders (due_at);

-- Published messages not yet acknowledged by their topic's subscriber.
CREATE TABLE outbox (
  seq         INTEGER PRIMARY KEY,
  delivery_id TEXT NOT NULL,
  topic       TEXT NOT NULL,
  data        TEXT NOT NULL
);
