-- The operator's delivery-receipt signing keys (Ed25519; mta/receipt.keys.ts). public_jwk is the
-- JSON of the public JWK; private_key the PKCS#8 PEM, sealed with GATEPOST_ENCRYPTION_KEY when it
-- is set (lib/sealed.ts). At most one key is current (retired_at NULL): the partial unique index
-- holds every current row under one value, so two hosts making the first key at once make one.
-- Retired keys stay: the JWKS lists them, so the receipts they signed still verify.
CREATE TABLE receipt_keys (
  kid         TEXT PRIMARY KEY,
  public_jwk  TEXT NOT NULL,
  private_key TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  retired_at  TEXT
);
CREATE UNIQUE INDEX receipt_keys_one_current ON receipt_keys ((retired_at IS NULL)) WHERE retired_at IS NULL;
