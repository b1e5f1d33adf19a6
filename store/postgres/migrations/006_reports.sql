-- Every message received at a return-path domain, as in sqlite/migrations/006_reports.sql.
CREATE TABLE reports (
  id             text COLLATE "C" PRIMARY KEY,
  tenant_id      text COLLATE "C",
  rcpt           text NOT NULL,
  mail_from      text NOT NULL,
  remote_address text NOT NULL,
  received_at    timestamptz(3) NOT NULL,
  kind           text NOT NULL,
  outcome        text NOT NULL,
  message_id     text,
  reason         text,
  findings       jsonb NOT NULL,
  excerpt        text,
  size           integer NOT NULL
);
CREATE INDEX reports_recent ON reports (received_at DESC, id DESC);
CREATE INDEX reports_by_tenant ON reports (tenant_id, received_at DESC, id DESC);
