-- The catalog on PostgreSQL: the tables of the SQLite store (sqlite/migrations/001_catalog.sql),
-- in PostgreSQL's types. Keys, ids, slugs and addresses are COLLATE "C": compared and sorted byte
-- by byte, as SQLite does, whatever locale the database was created with (an en_US database
-- would otherwise list "a_b" before "a-z" and "alice" before "Bob", and page by that order).
-- Times are timestamptz(3): millisecond precision, so an ISO 8601 string from toISOString()
-- goes in and comes back out unchanged.

CREATE TABLE tenants (
  id           text COLLATE "C" PRIMARY KEY,
  name         text NOT NULL,
  default_from text,
  quota        jsonb NOT NULL,
  created_at   timestamptz(3) NOT NULL
);

-- Keys are stored as SHA-256 hashes: they are long random strings, so a slow hash adds nothing.
-- scope, sandbox and the browser settings as in sqlite/migrations/001_catalog.sql.
CREATE TABLE api_keys (
  id              text COLLATE "C" PRIMARY KEY,
  tenant_id       text COLLATE "C" NOT NULL REFERENCES tenants (id),
  kind            text NOT NULL CHECK (kind IN ('live', 'sandbox', 'public')),
  scope           text NOT NULL CHECK (scope IN ('full_access', 'sending_access')),
  sandbox         boolean NOT NULL,
  name            text,
  prefix          text NOT NULL,
  hash            text NOT NULL UNIQUE,
  created_at      timestamptz(3) NOT NULL,
  revoked_at      timestamptz(3),
  allowed_origins text[] NOT NULL,
  rate_per_key    integer,
  rate_per_ip     integer
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at, id);

CREATE TABLE templates (
  id         text COLLATE "C" PRIMARY KEY,
  tenant_id  text COLLATE "C" NOT NULL REFERENCES tenants (id),
  slug       text COLLATE "C" NOT NULL,
  name       text,
  subject    text NOT NULL,
  html       text NOT NULL,
  text       text,
  from_addr  text,
  to_addr    text,
  reply_to   text,
  created_at timestamptz(3) NOT NULL,
  updated_at timestamptz(3) NOT NULL,
  -- Named: a violation of this one (and only this one) is a taken slug.
  CONSTRAINT templates_slug_unique UNIQUE (tenant_id, slug)
);

-- An index of the recipient actors' suppression state, fed through pub/sub, for listing.
CREATE TABLE suppressions (
  tenant_id  text COLLATE "C" NOT NULL,
  address    text COLLATE "C" NOT NULL,
  reason     text NOT NULL,
  detail     text,
  created_at timestamptz(3) NOT NULL,
  PRIMARY KEY (tenant_id, address)
);

-- The sandbox capture inbox. body is the CapturedMessage, with headers as [name, value] pairs:
-- jsonb keeps no key order, and the order of headers is part of the message.
CREATE TABLE captures (
  tenant_id   text COLLATE "C" NOT NULL,
  message_id  text COLLATE "C" NOT NULL,
  captured_at timestamptz(3) NOT NULL,
  body        jsonb NOT NULL,
  PRIMARY KEY (tenant_id, message_id)
);
CREATE INDEX captures_recent ON captures (tenant_id, captured_at DESC, message_id DESC);

-- Webhook endpoints, as in sqlite/migrations/001_catalog.sql, in PostgreSQL's types (secrets
-- sealed with GATEPOST_ENCRYPTION_KEY when it is set).
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
