-- Each actor host's fair queue as it last told it, as in sqlite/migrations/012_queue_snapshots.sql.
-- taken_at is the server's clock, so hosts whose clocks differ are judged by one.
CREATE TABLE queue_snapshots (
  host_id text PRIMARY KEY,
  rows jsonb NOT NULL,
  taken_at timestamptz NOT NULL DEFAULT now()
);
