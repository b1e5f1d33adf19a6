-- Inbound mail, as in sqlite/migrations/005_inbound.sql, in PostgreSQL's types: the raw message
-- and its attachments are kept here so the API of any process can serve them.
CREATE TABLE inbound_routes (
  id          text COLLATE "C" PRIMARY KEY,
  tenant_id   text COLLATE "C" NOT NULL REFERENCES tenants (id),
  match       text COLLATE "C" NOT NULL,
  domain      text COLLATE "C" NOT NULL,
  action      text NOT NULL CHECK (action IN ('webhook', 'store')),
  endpoint_id text COLLATE "C",
  created_at  timestamptz(3) NOT NULL,
  updated_at  timestamptz(3) NOT NULL,
  UNIQUE (tenant_id, match)
);
CREATE INDEX inbound_routes_tenant ON inbound_routes (tenant_id, created_at, id);
CREATE INDEX inbound_routes_domain ON inbound_routes (domain, created_at, id);

CREATE TABLE inbound_messages (
  id             text COLLATE "C" PRIMARY KEY,
  tenant_id      text COLLATE "C" NOT NULL REFERENCES tenants (id),
  route_id       text COLLATE "C" NOT NULL,
  mail_from      text NOT NULL,
  rcpt_to        jsonb NOT NULL,
  remote_address text NOT NULL,
  received_at    timestamptz(3) NOT NULL,
  payload        jsonb NOT NULL,
  size           integer NOT NULL,
  raw            bytea NOT NULL
);
CREATE INDEX inbound_messages_tenant ON inbound_messages (tenant_id, received_at DESC, id DESC);

CREATE TABLE inbound_attachments (
  message_id   text COLLATE "C" NOT NULL REFERENCES inbound_messages (id) ON DELETE CASCADE,
  n            integer NOT NULL,
  filename     text,
  content_type text NOT NULL,
  size         integer NOT NULL,
  content_id   text,
  content      bytea NOT NULL,
  PRIMARY KEY (message_id, n)
);
