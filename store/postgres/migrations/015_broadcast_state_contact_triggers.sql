-- Where a sent broadcast is, as in sqlite/migrations/015_broadcast_state_contact_triggers.sql, in PostgreSQL's types.
ALTER TABLE broadcasts ADD COLUMN paused jsonb;
ALTER TABLE broadcasts ADD COLUMN progress jsonb;

-- Contacts whose contact_added runs are owed, as in sqlite/migrations/015_broadcast_state_contact_triggers.sql.
CREATE TABLE contact_triggers (
  contact_id  text COLLATE "C" PRIMARY KEY,
  tenant_id   text COLLATE "C" NOT NULL,
  audience_id text COLLATE "C" NOT NULL,
  email       text NOT NULL,
  added_at    timestamptz(3) NOT NULL
);
CREATE INDEX contact_triggers_added ON contact_triggers (added_at);
