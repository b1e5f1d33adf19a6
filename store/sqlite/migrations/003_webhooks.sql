-- Webhook endpoints. Secrets are HMAC keys that deliveries sign with, so they are stored as they
-- are (API keys, by contrast, are only ever compared, and are stored hashed). events is a JSON
-- array of event types.
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
