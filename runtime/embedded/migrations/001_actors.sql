-- Actor state, one row per (actor, key); values are JSON.
CREATE TABLE actor_state (
  actor_type TEXT NOT NULL,
  actor_id   TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (actor_type, actor_id, key)
) WITHOUT ROWID;

-- One-shot reminders; a reminder is deleted by the turn it fires unless that turn sets it again.
CREATE TABLE reminders (
  actor_type TEXT NOT NULL,
  actor_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  due_at     INTEGER NOT NULL,
  data       TEXT,
  PRIMARY KEY (actor_type, actor_id, name)
) WITHOUT ROWID;
CREATE INDEX reminders_due ON reminders (due_at);

-- Published messages not yet acknowledged by their topic's subscriber.
CREATE TABLE outbox (
  seq         INTEGER PRIMARY KEY,
  delivery_id TEXT NOT NULL,
  topic       TEXT NOT NULL,
  data        TEXT NOT NULL
);
