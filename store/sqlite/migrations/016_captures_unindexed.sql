-- The captures not yet in the inbox's search index (004_inbox.sql), in the order they were
-- captured: a capture's commit lists it here, and the writer thread indexes what is listed when it
-- has nothing else to commit, or at once before a search (catalog.apply.ts says why).
CREATE TABLE captures_unindexed (
  seq        INTEGER PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  message_id TEXT NOT NULL
);
