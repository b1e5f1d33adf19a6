-- What a key may do: a live key's scope (full_access manages resources, sending_access only sends
-- and reads messages), and whether a key's sends are captured instead of delivered (every
-- sandbox key; a public key made for trying the browser SDK out).
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'full_access';
ALTER TABLE api_keys ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;
UPDATE api_keys SET scope = 'sending_access' WHERE kind <> 'live';
UPDATE api_keys SET sandbox = 1 WHERE kind = 'sandbox';
