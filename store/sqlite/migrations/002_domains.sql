-- Sending domains (tenancy/domains.ts). The DKIM private keys are sealed with
-- GATEPOST_ENCRYPTION_KEY when it is set (lib/sealed.ts); checks is a JSON object of the last
-- verification's result per DNS record.
CREATE TABLE domains (
  id             TEXT PRIMARY KEY,
  tenant_id      TEXT NOT NULL REFERENCES tenants (id),
  name           TEXT NOT NULL,
  status         TEXT NOT NULL CHECK (status IN ('pending', 'verified')),
  rsa_selector   TEXT NOT NULL,
  rsa_public     TEXT NOT NULL,
  rsa_private    TEXT NOT NULL,
  ed_selector    TEXT NOT NULL,
  ed_public      TEXT NOT NULL,
  ed_private     TEXT NOT NULL,
  checks         TEXT NOT NULL,
  checked_at     TEXT,
  verified_at    TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  UNIQUE (tenant_id, name)
);
CREATE INDEX domains_tenant ON domains (tenant_id, created_at, id);
-- One tenant at most holds a name verified: the sender check and DKIM signing rely on it.
CREATE UNIQUE INDEX domains_verified_name ON domains (name) WHERE status = 'verified';
