-- A sending domain's custom tracking host, as in sqlite/migrations/007_tracking_host.sql.
ALTER TABLE domains ADD COLUMN tracking_host text;
