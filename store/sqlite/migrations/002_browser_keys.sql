-- The settings of keys a browser uses (public, sandbox): the origins a page may send from (a JSON
-- array of origins; empty: any) and the browser SDK's sends per minute (NULL: the defaults).
ALTER TABLE api_keys ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '[]';
ALTER TABLE api_keys ADD COLUMN rate_per_key INTEGER;
ALTER TABLE api_keys ADD COLUMN rate_per_ip INTEGER;
