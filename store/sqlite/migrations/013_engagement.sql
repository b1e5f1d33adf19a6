-- Opens and clicks of sent messages (docs/tracking.md), written many messages' at a time by the
-- tracking recorder, apart from each message's actor, so a click does not rewrite its timeline.
-- `seq` is the order they were recorded in; a message's are read by time, then `seq`.
CREATE TABLE engagement (
  seq        INTEGER PRIMARY KEY,
  event_id   TEXT NOT NULL UNIQUE,
  message_id TEXT NOT NULL,
  tenant_id  TEXT NOT NULL,
  type       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  data       TEXT NOT NULL
);
CREATE INDEX engagement_message ON engagement (message_id, seq);
