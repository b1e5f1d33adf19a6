-- Webhook endpoints (sqlite/migrations/003_webhooks.sql in PostgreSQL's types). Secrets are HMAC
-- keys that deliveries sign with, so they are stored as they are (API keys are stored hashed).
CREATE TABLE webhooks (
  id                         text COLLATE "C" PRIMARY KEY,
  tenant_id                  text COLLATE "C" NOT NULL REFERENCES tenants (id),
  url                        text NOT NULL,
  events                     text[] NOT NULL,
  enabled                    boolean NOT NULL,
  disabled_reason            text CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
  disabled_at                timestamptz(3),
  secret                     text NOT NULL,
  previous_secret            text,
  previous_secret_expires_at timestamptz(3),
  created_at                 timestamptz(3) NOT NULL,
  updated_at                 timestamptz(3) NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, created_at, id);
