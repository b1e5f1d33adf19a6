-- The operator's delivery-receipt signing keys, as in sqlite/migrations/003_receipt_keys.sql, in
-- PostgreSQL's types. public_jwk is text, not jsonb: it is read back as it was written.
CREATE TABLE receipt_keys (
  kid         text COLLATE "C" PRIMARY KEY,
  public_jwk  text NOT NULL,
  private_key text NOT NULL,
  created_at  timestamptz(3) NOT NULL,
  retired_at  timestamptz(3)
);
CREATE UNIQUE INDEX receipt_keys_one_current ON receipt_keys ((retired_at IS NULL)) WHERE retired_at IS NULL;
