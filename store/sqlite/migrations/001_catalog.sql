CREATE TABLE tenants (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  default_from TEXT,
  quota        TEXT NOT NULL,
  created_at   TEXT NOT NULL
);

-- Keys are stored as SHA-256 hashes: they are long random strings, so a slow hash adds nothing.
-- scope: what a live key may do (full_access manages resources, sending_access only sends and
-- reads messages); sandbox: its sends are captured instead of delivered (every sandbox key, and a
-- public key made for trying the browser SDK out). The settings of keys a browser uses: the
-- origins a page may send from (a JSON array; empty: any) and the browser SDK's sends per minute
-- (NULL: the defaults).
CREATE TABLE api_keys (
  id              TEXT PRIMARY KEY,
  tenant_id       TEXT NOT NULL REFERENCES tenants (id),
  kind            TEXT NOT NULL CHECK (kind IN ('live', 'sandbox', 'public')),
  scope           TEXT NOT NULL CHECK (scope IN ('full_access', 'sending_access')),
  sandbox         INTEGER NOT NULL,
  name            TEXT,
  prefix          TEXT NOT NULL,
  hash            TEXT NOT NULL UNIQUE,
  created_at      TEXT NOT NULL,
  revoked_at      TEXT,
  allowed_origins TEXT NOT NULL,
  rate_per_key    INTEGER,
  rate_per_ip     INTEGER
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

-- Webhook endpoints. Secrets are HMAC keys that deliveries sign with, so they are stored to be
-- read back (API keys, by contrast, are only ever compared, and are stored hashed): sealed with
-- GATEPOST_ENCRYPTION_KEY when it is set (lib/sealed.ts). events is a JSON array of event types.
CREATE TABLE webhooks (
  id                         TEXT PRIMARY KEY,
  tenant_id                  TEXT NOT NULL REFERENCES tenants (id),
  url                        TEXT NOT NULL,
  events                     TEXT NOT NULL,
  enabled                    INTEGER NOT NULL,
  disabled_reason            TEXT CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
  disabled_at                TEXT,
  secret                     TEXT NOT NULL,
  previous_secret            TEXT,
  previous_secret_expires_at TEXT,
  created_at                 TEXT NOT NULL,
  updated_at                 TEXT NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, created_at, id);
