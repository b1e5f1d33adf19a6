-- Captures in a rowid table, no longer WITHOUT ROWID. A WITHOUT ROWID table keeps at most about a
-- quarter of a 4 KiB page of each row in its B-tree and the rest on an overflow page of the row's
-- own: every capture (a body of about 1 KiB) took a page of its own, three quarters empty,
-- written at its commit and again at the checkpoint. A rowid table keeps rows whole up to nearly
-- a page, appended in the order they come; (tenant_id, message_id) stays unique through its index.
-- The indexes the inbox pages along are ascending now, read backwards for newest first: a new
-- capture's entry goes at their right end, where SQLite fills pages, not at their left end, where
-- every split left two half-empty pages.
CREATE TABLE captures_by_rowid (
  tenant_id   TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  captured_at TEXT NOT NULL,
  body        TEXT NOT NULL,
  key_id      TEXT,
  UNIQUE (tenant_id, message_id)
);
INSERT INTO captures_by_rowid (tenant_id, message_id, captured_at, body, key_id)
  SELECT tenant_id, message_id, captured_at, body, key_id FROM captures ORDER BY captured_at, message_id;
DROP TABLE captures;
ALTER TABLE captures_by_rowid RENAME TO captures;
CREATE INDEX captures_recent ON captures (tenant_id, captured_at, message_id);
CREATE INDEX captures_by_key ON captures (tenant_id, key_id, captured_at, message_id);
