-- The settings of keys a browser uses (public, sandbox): the origins a page may send from (empty:
-- any) and the browser SDK's sends per minute (NULL: the defaults). As sqlite/migrations/002.
ALTER TABLE api_keys
  ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}',
  ADD COLUMN rate_per_key integer,
  ADD COLUMN rate_per_ip integer;
