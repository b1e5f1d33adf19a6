-- The hosted capture inbox (ingress/inbox). key_id: the sandbox key that sent the message, so each
-- key has an inbox of its own beside the tenant's (NULL for captures from before this migration,
-- which only the tenant's inbox shows).
--
-- captures_search: what a search looks in (the recipient, the subject, the text part), as a
-- trigram index, so that a search for any three or more characters is answered from the index.
-- Its rows go in as the captures do, so its rowid is the order they were captured in: a search
-- walks the index newest first (FTS5 reads its lists by rowid, either way) and stops at the
-- page's end, whether the text is in every capture or in none. The tenant and the key are
-- indexed too, to narrow the walk to one inbox (the join on captures then checks them exactly).
-- The writer thread fills it (catalog.apply.ts; since 016_captures_unindexed.sql, off the
-- capture's commit); captures from before are indexed here, in the order they were captured,
-- with their html as the text.
ALTER TABLE captures ADD COLUMN key_id TEXT;
CREATE INDEX captures_by_key ON captures (tenant_id, key_id, captured_at DESC, message_id DESC);
CREATE VIRTUAL TABLE captures_search USING fts5 (
  tenant_id, key_id, recipient, subject, body, message_id UNINDEXED, tokenize = 'trigram'
);
INSERT INTO captures_search (tenant_id, key_id, recipient, subject, body, message_id)
  SELECT tenant_id, NULL, json_extract(body, '$.to'), json_extract(body, '$.subject'),
         coalesce(json_extract(body, '$.text'), json_extract(body, '$.html')), message_id
  FROM captures ORDER BY captured_at, message_id;

-- Sessions of the inbox's web UI: a random token in an HttpOnly cookie, stored only as its
-- SHA-256; it stands for the sandbox key signed in with until it expires or the key is revoked.
CREATE TABLE inbox_sessions (
  hash       TEXT PRIMARY KEY,
  key_id     TEXT NOT NULL REFERENCES api_keys (id),
  expires_at TEXT NOT NULL
) WITHOUT ROWID;
