-- Automations and their runs, as in sqlite/migrations/011_automations.sql, in PostgreSQL's types.
CREATE TABLE automations (
  id           text COLLATE "C" PRIMARY KEY,
  tenant_id    text COLLATE "C" NOT NULL REFERENCES tenants (id),
  name         text NOT NULL,
  audience_id  text COLLATE "C" NOT NULL,
  trigger_type text COLLATE "C" NOT NULL,
  trigger_key  text COLLATE "C" NOT NULL,
  definition   jsonb NOT NULL,
  enabled      boolean NOT NULL,
  sandbox      boolean NOT NULL,
  key_id       text COLLATE "C" NOT NULL,
  created_at   timestamptz(3) NOT NULL,
  updated_at   timestamptz(3) NOT NULL
);
CREATE INDEX automations_tenant ON automations (tenant_id, created_at, id);
CREATE INDEX automations_trigger ON automations (tenant_id, trigger_type, trigger_key) WHERE enabled;

CREATE TABLE automation_runs (
  id            text COLLATE "C" PRIMARY KEY,
  tenant_id     text COLLATE "C" NOT NULL,
  automation_id text COLLATE "C" NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
  contact_id    text COLLATE "C" NOT NULL,
  email         text COLLATE "C" NOT NULL,
  status        text NOT NULL,
  reason        text,
  started_at    timestamptz(3) NOT NULL,
  updated_at    timestamptz(3) NOT NULL
);
CREATE INDEX automation_runs_list ON automation_runs (automation_id, started_at, id);
