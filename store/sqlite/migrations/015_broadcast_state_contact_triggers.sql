-- Where a sent broadcast is, written by its BroadcastActor after each page of its fan-out, so that
-- GET /v1/broadcasts/:id reads it here and never waits for a page under way: `paused` (JSON
-- {reason, until}, null unless paused) and `progress` (JSON {admitted, refused, started_at,
-- finished_at}, null for a draft).
ALTER TABLE broadcasts ADD COLUMN paused TEXT;
ALTER TABLE broadcasts ADD COLUMN progress TEXT;

-- A contact added to an audience that an enabled automation starts a run for (`contact_added`),
-- written in the contact's own transaction and deleted once its runs are started: a crash between
-- the two leaves the row, and a sweep starts the runs (gate/automations.ts), once each by run id.
CREATE TABLE contact_triggers (
  contact_id  TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL,
  audience_id TEXT NOT NULL,
  email       TEXT NOT NULL,
  added_at    TEXT NOT NULL
);
CREATE INDEX contact_triggers_added ON contact_triggers (added_at);
