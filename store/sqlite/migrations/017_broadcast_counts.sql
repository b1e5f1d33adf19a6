-- Each broadcast's counted events by kind, kept beside broadcast_events by the writer that counts
-- them (catalog.apply.ts): GET /v1/broadcasts/:id reads a row a kind, where counting the events
-- at each read grew with the broadcast, on the event loop (about 21 ms a read once 100,000 were
-- sent and 25,000 opened; bench/RESULTS.md, thirty-seventh pass). Rows go with their broadcast.
CREATE TABLE broadcast_counts (
  broadcast_id TEXT NOT NULL,
  kind         TEXT NOT NULL,
  n            INTEGER NOT NULL,
  PRIMARY KEY (broadcast_id, kind)
) WITHOUT ROWID;

INSERT INTO broadcast_counts (broadcast_id, kind, n)
  SELECT broadcast_id, kind, count(*) FROM broadcast_events GROUP BY broadcast_id, kind;
