-- Opens and clicks, as in sqlite/migrations/013_engagement.sql, in PostgreSQL's types. The time
-- and the data are kept as the event's own text, so a timeline reads back exactly what webhooks were sent.
CREATE TABLE engagement (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id   text COLLATE "C" NOT NULL UNIQUE,
  message_id text COLLATE "C" NOT NULL,
  tenant_id  text COLLATE "C" NOT NULL,
  type       text NOT NULL,
  created_at text NOT NULL,
  data       text NOT NULL
);
CREATE INDEX engagement_message ON engagement (message_id, seq);
