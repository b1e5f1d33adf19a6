-- Audiences and their contacts, as in sqlite/migrations/008_audiences.sql, in PostgreSQL's types.
CREATE TABLE audiences (
  id         text COLLATE "C" PRIMARY KEY,
  tenant_id  text COLLATE "C" NOT NULL REFERENCES tenants (id),
  name       text NOT NULL,
  created_at timestamptz(3) NOT NULL
);
CREATE INDEX audiences_tenant ON audiences (tenant_id, created_at, id);

CREATE TABLE contacts (
  id           text COLLATE "C" PRIMARY KEY,
  tenant_id    text COLLATE "C" NOT NULL,
  audience_id  text COLLATE "C" NOT NULL REFERENCES audiences (id) ON DELETE CASCADE,
  email        text COLLATE "C" NOT NULL,
  name         text,
  data         jsonb NOT NULL,
  unsubscribed boolean NOT NULL,
  created_at   timestamptz(3) NOT NULL,
  updated_at   timestamptz(3) NOT NULL,
  UNIQUE (audience_id, email)
);
CREATE INDEX contacts_audience ON contacts (audience_id, id);
