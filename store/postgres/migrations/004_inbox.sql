-- The hosted capture inbox, as in sqlite/migrations/004_inbox.sql, in PostgreSQL's terms: search
-- is what a search looks in (the recipient, the subject, the text part), under a trigram GIN
-- index (pg_trgm, a trusted extension shipped with PostgreSQL), so an ILIKE for any three or more
-- characters is answered from the index. Captures from before are searched with their html as the text.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
ALTER TABLE captures ADD COLUMN key_id text COLLATE "C";
ALTER TABLE captures ADD COLUMN search text NOT NULL DEFAULT '';
UPDATE captures SET search = concat_ws(' ', body->>'to', body->>'subject', coalesce(body->>'text', body->>'html'));
CREATE INDEX captures_by_key ON captures (tenant_id, key_id, captured_at DESC, message_id DESC);
CREATE INDEX captures_search ON captures USING gin (search gin_trgm_ops);

CREATE TABLE inbox_sessions (
  hash       text COLLATE "C" PRIMARY KEY,
  key_id     text COLLATE "C" NOT NULL REFERENCES api_keys (id),
  expires_at timestamptz(3) NOT NULL
);
