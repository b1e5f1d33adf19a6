-- Inbound mail (ingress/inbound): the routes that say which recipients a tenant receives mail for,
-- and what the inbound MX received. A message's raw bytes and attachments are kept here, beside
-- the parsed payload (JSON), so any process serving the API can hand them out.
CREATE TABLE inbound_routes (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  match       TEXT NOT NULL,
  domain      TEXT NOT NULL,
  action      TEXT NOT NULL CHECK (action IN ('webhook', 'store')),
  endpoint_id TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  UNIQUE (tenant_id, match)
);
CREATE INDEX inbound_routes_tenant ON inbound_routes (tenant_id, created_at, id);
CREATE INDEX inbound_routes_domain ON inbound_routes (domain, created_at, id);

CREATE TABLE inbound_messages (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL REFERENCES tenants (id),
  route_id       TEXT NOT NULL,
  mail_from      TEXT NOT NULL,
  rcpt_to        TEXT NOT NULL,
  remote_address TEXT NOT NULL,
  received_at    TEXT NOT NULL,
  payload        TEXT NOT NULL,
  size           INTEGER NOT NULL,
  raw            BLOB NOT NULL
);
CREATE INDEX inbound_messages_tenant ON inbound_messages (tenant_id, received_at DESC, id DESC);

CREATE TABLE inbound_attachments (
  message_id   TEXT NOT NULL REFERENCES inbound_messages (id) ON DELETE CASCADE,
  n            INTEGER NOT NULL,
  filename     TEXT,
  content_type TEXT NOT NULL,
  size         INTEGER NOT NULL,
  content_id   TEXT,
  content      BLOB NOT NULL,
  PRIMARY KEY (message_id, n)
) WITHOUT ROWID;
