-- Actor state in a rowid table. In the WITHOUT ROWID table of 001, a value over about 1 KB (a
-- message's record) spilled onto an overflow page of its own, mostly empty: some 5 KB of file per
-- message. A rowid table keeps values up to about 4 KB in the leaf pages; (actor, key) stays unique.
CREATE TABLE actor_state_rows (
  actor_type TEXT NOT NULL,
  actor_id   TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  UNIQUE (actor_type, actor_id, key)
);
INSERT INTO actor_state_rows (actor_type, actor_id, key, value) SELECT actor_type, actor_id, key, value FROM actor_state;
DROP TABLE actor_state;
ALTER TABLE actor_state_rows RENAME TO actor_state;
