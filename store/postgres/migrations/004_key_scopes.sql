-- What a key may do: a live key's scope and whether its sends are captured. As sqlite/migrations/004.
ALTER TABLE api_keys
  ADD COLUMN scope text NOT NULL DEFAULT 'full_access',
  ADD COLUMN sandbox boolean NOT NULL DEFAULT false;
UPDATE api_keys SET scope = 'sending_access' WHERE kind <> 'live';
UPDATE api_keys SET sandbox = true WHERE kind = 'sandbox';
