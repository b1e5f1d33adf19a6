-- Audiences and their contacts (docs/broadcasts.md): what broadcasts fan out to. A contact's
-- email is stored normalized (lower case), once per audience; `data` is its merge variables (JSON).
-- Contacts are paged by id, which is also the order a broadcast walks them in.
CREATE TABLE audiences (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  name       TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX audiences_tenant ON audiences (tenant_id, created_at, id);

CREATE TABLE contacts (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL,
  audience_id  TEXT NOT NULL REFERENCES audiences (id) ON DELETE CASCADE,
  email        TEXT NOT NULL,
  name         TEXT,
  data         TEXT NOT NULL,
  unsubscribed INTEGER NOT NULL,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  UNIQUE (audience_id, email)
);
CREATE INDEX contacts_audience ON contacts (audience_id, id);
