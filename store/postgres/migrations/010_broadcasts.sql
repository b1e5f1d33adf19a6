-- Broadcasts and their counted events, as in sqlite/migrations/010_broadcasts.sql, in PostgreSQL's types.
CREATE TABLE broadcasts (
  id          text COLLATE "C" PRIMARY KEY,
  tenant_id   text COLLATE "C" NOT NULL REFERENCES tenants (id),
  name        text NOT NULL,
  audience_id text COLLATE "C" NOT NULL,
  from_addr   text NOT NULL,
  subject     text,
  html        text,
  text        text,
  template    text,
  data        jsonb NOT NULL,
  sandbox     boolean NOT NULL,
  status      text NOT NULL,
  send_at     timestamptz(3),
  created_at  timestamptz(3) NOT NULL,
  updated_at  timestamptz(3) NOT NULL
);
CREATE INDEX broadcasts_tenant ON broadcasts (tenant_id, created_at, id);

CREATE TABLE broadcast_events (
  broadcast_id text COLLATE "C" NOT NULL,
  kind         text COLLATE "C" NOT NULL,
  message_id   text COLLATE "C" NOT NULL,
  PRIMARY KEY (broadcast_id, kind, message_id)
);
