-- Automations (docs/automations.md): a trigger and steps, run for the contacts of one audience.
-- `trigger_key` is what the trigger is found by: the audience (contact_added), the event type
-- (email_event) or the event's name (custom_event); `definition` holds the trigger and steps (JSON).
CREATE TABLE automations (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  name         TEXT NOT NULL,
  audience_id  TEXT NOT NULL,
  trigger_type TEXT NOT NULL,
  trigger_key  TEXT NOT NULL,
  definition   TEXT NOT NULL,
  enabled      INTEGER NOT NULL,
  sandbox      INTEGER NOT NULL,
  key_id       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX automations_tenant ON automations (tenant_id, created_at, id);
CREATE INDEX automations_trigger ON automations (tenant_id, trigger_type, trigger_key) WHERE enabled = 1;

-- The list of an automation's runs, mirrored from the run actors (each run's timeline is its actor's).
CREATE TABLE automation_runs (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL,
  automation_id TEXT NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
  contact_id    TEXT NOT NULL,
  email         TEXT NOT NULL,
  status        TEXT NOT NULL,
  reason        TEXT,
  started_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX automation_runs_list ON automation_runs (automation_id, started_at, id);
