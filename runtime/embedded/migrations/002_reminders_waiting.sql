-- The reminders of messages that wait (scheduled, deferred, queued for delivery), for the queue's
-- metrics (app/queue.embedded.ts): read at every scrape, they are a few among every message's
-- watchdog and retention reminder. A partial index holds only them, so a scrape reads what waits,
-- not every message kept; the others cost a write only the test of the name. A query uses it only
-- when its WHERE repeats this index's term word for word (SQLite's rule for partial indexes).
CREATE INDEX reminders_waiting ON reminders (actor_type, name) WHERE name IN ('send', 'retry', 'queued');
