-- Sending domains, as in sqlite/migrations/002_domains.sql, in PostgreSQL's types (DKIM private
-- keys sealed with GATEPOST_ENCRYPTION_KEY when it is set).
CREATE TABLE domains (
  id             text COLLATE "C" PRIMARY KEY,
  tenant_id      text COLLATE "C" NOT NULL REFERENCES tenants (id),
  name           text COLLATE "C" NOT NULL,
  status         text NOT NULL CHECK (status IN ('pending', 'verified')),
  rsa_selector   text NOT NULL,
  rsa_public     text NOT NULL,
  rsa_private    text NOT NULL,
  ed_selector    text NOT NULL,
  ed_public      text NOT NULL,
  ed_private     text NOT NULL,
  checks         jsonb NOT NULL,
  checked_at     timestamptz(3),
  verified_at    timestamptz(3),
  created_at     timestamptz(3) NOT NULL,
  updated_at     timestamptz(3) NOT NULL,
  UNIQUE (tenant_id, name)
);
CREATE INDEX domains_tenant ON domains (tenant_id, created_at, id);
-- One tenant at most holds a name verified: the sender check and DKIM signing rely on it.
CREATE UNIQUE INDEX domains_verified_name ON domains (name) WHERE status = 'verified';
