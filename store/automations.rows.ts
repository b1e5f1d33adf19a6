// Automations and their runs as both catalogs store them: one row shape, one trigger key.
import type { Automation, AutomationPatch, AutomationRun, AutomationTrigger } from './catalog.port.ts';

export const AUTOMATION_COLUMNS =
  'id, tenant_id, name, audience_id, trigger_type, trigger_key, definition, enabled, sandbox, key_id, created_at, updated_at';

export const RUN_COLUMNS = 'id, tenant_id, automation_id, contact_id, email, status, reason, started_at, updated_at';

/** What `automationsTriggeredBy` finds an automation by, beside its trigger's type. */
export function triggerKey(a: Pick<Automation, 'trigger' | 'audience_id'>): string {
  const t: AutomationTrigger = a.trigger;
  if (t.type === 'contact_added') return a.audience_id;
  return t.type === 'email_event' ? t.event : t.name;
}

/** Those of a tenant's enabled automations `automationsTriggeredBy` answers: each catalog keeps the list in memory. */
export function triggeredBy(enabled: Automation[], type: AutomationTrigger['type'], key: string): Automation[] {
  return enabled.filter((a) => a.trigger.type === type && triggerKey(a) === key);
}

/** An automation as a store returns it: its trigger and steps in one JSON `definition`; SQLite gives flags as 0 or 1. */
export interface AutomationRow {
  id: string;
  tenant_id: string;
  name: string;
  audience_id: string;
  definition: string | Pick<Automation, 'trigger' | 'steps'>;
  enabled: number | boolean;
  sandbox: number | boolean;
  key_id: string;
  created_at: string;
  updated_at: string;
}

export function automationOf(row: AutomationRow): Automation {
  const definition = typeof row.definition === 'string' ? (JSON.parse(row.definition) as Automation) : row.definition;
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    audience_id: row.audience_id,
    trigger: definition.trigger,
    steps: definition.steps,
    enabled: Boolean(row.enabled),
    sandbox: Boolean(row.sandbox),
    key_id: row.key_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The row's values in AUTOMATION_COLUMNS' order. */
export function automationValues(a: Automation): unknown[] {
  return [
    a.id,
    a.tenant_id,
    a.name,
    a.audience_id,
    a.trigger.type,
    triggerKey(a),
    JSON.stringify({ trigger: a.trigger, steps: a.steps }),
    a.enabled,
    a.sandbox,
    a.key_id,
    a.created_at,
    a.updated_at,
  ];
}

/** The run's values in RUN_COLUMNS' order. */
export const runValues = (r: AutomationRun): unknown[] => [
  r.id,
  r.tenant_id,
  r.automation_id,
  r.contact_id,
  r.email,
  r.status,
  r.reason,
  r.started_at,
  r.updated_at,
];

/** The automation with the patch's given fields applied, as both stores write it. */
export function patchedAutomation(a: Automation, patch: AutomationPatch, at: string): Automation {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  return { ...a, ...defined, updated_at: at };
}
