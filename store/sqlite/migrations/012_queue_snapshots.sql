-- What each actor host's fair queue held when it last told (app/queue.shared.ts): on Dapr the API
-- processes answer GET /v1/queue and /v1/admin/queue from these, one row per host, rewritten every
-- second. taken_at: ms since epoch.
CREATE TABLE queue_snapshots (
  host_id TEXT PRIMARY KEY,
  rows TEXT NOT NULL,
  taken_at INTEGER NOT NULL
);
