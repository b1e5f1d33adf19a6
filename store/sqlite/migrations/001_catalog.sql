CREATE TABLE tenants (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  default_from TEXT,
  quota        TEXT NOT NULL,
  created_at   TEXT NOT NULL
);

-- Keys are stored as SHA-256 hashes: they are long random strings, so a slow hash adds nothing.
CREATE TABLE api_keys (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  kind       TEXT NOT NULL CHECK (kind IN ('live', 'sandbox', 'public')),
  name       TEXT,
  prefix     TEXT NOT NULL,
  hash       TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE templates (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  slug       TEXT NOT NULL,
  name       TEXT,
  subject    TEXT NOT NULL,
  html       TEXT NOT NULL,
  text       TEXT,
  from_addr  TEXT,
  to_addr    TEXT,
  reply_to   TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, slug)
);

-- An index of the recipient actors' suppression state, fed through pub/sub, for listing.
CREATE TABLE suppressions (
  tenant_id  TEXT NOT NULL,
  address    TEXT NOT NULL,
  reason     TEXT NOT NULL,
  detail     TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, address)
) WITHOUT ROWID;

-- The sandbox capture inbox.
CREATE TABLE captures (
  tenant_id   TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  captured_at TEXT NOT NULL,
  body        TEXT NOT NULL,
  PRIMARY KEY (tenant_id, message_id)
) WITHOUT ROWID;
CREATE INDEX captures_recent ON captures (tenant_id, captured_at DESC, message_id DESC);
