-- Broadcasts (docs/broadcasts.md): a draft's fields, and the status its BroadcastActor last
-- reported, for listing; the actor holds the fan-out itself. An audience may be deleted after a
-- broadcast to it went out: the broadcast stays, with its results.
CREATE TABLE broadcasts (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  name        TEXT NOT NULL,
  audience_id TEXT NOT NULL,
  from_addr   TEXT NOT NULL,
  subject     TEXT,
  html        TEXT,
  text        TEXT,
  template    TEXT,
  data        TEXT NOT NULL,
  sandbox     INTEGER NOT NULL,
  status      TEXT NOT NULL,
  send_at     TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX broadcasts_tenant ON broadcasts (tenant_id, created_at, id);

-- Each message of a broadcast counted once per kind of lifecycle event (sent, opened, ...): the
-- key makes counting an event delivered twice (pub/sub is at-least-once) change nothing.
CREATE TABLE broadcast_events (
  broadcast_id TEXT NOT NULL,
  kind         TEXT NOT NULL,
  message_id   TEXT NOT NULL,
  PRIMARY KEY (broadcast_id, kind, message_id)
) WITHOUT ROWID;
