-- Every message received at a return-path domain (docs/bounces.md): bounces and complaints tied to
-- their message, and the rest, kept with what was found and why it was not tied. tenant_id: the
-- tenant whose verified domain owns the return-path domain (NULL when none does); findings: the
-- parser's result as JSON; excerpt: the start of an unrecognised message, to look at.
CREATE TABLE reports (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT,
  rcpt           TEXT NOT NULL,
  mail_from      TEXT NOT NULL,
  remote_address TEXT NOT NULL,
  received_at    TEXT NOT NULL,
  kind           TEXT NOT NULL,
  outcome        TEXT NOT NULL,
  message_id     TEXT,
  reason         TEXT,
  findings       TEXT NOT NULL,
  excerpt        TEXT,
  size           INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX reports_recent ON reports (received_at DESC, id DESC);
CREATE INDEX reports_by_tenant ON reports (tenant_id, received_at DESC, id DESC);
