// The state an AutomationRunActor keeps: one run of an automation for one contact, where it is in
// the steps, the messages its sends made, and its timeline.
import type { AutomationRun, AutomationStep, Contact } from '../../store/catalog.port.ts';

export const AUTOMATION_RUN_ACTOR = 'AutomationRunActor';
/** Published when a run's status changes (`RunChanged`): the catalog's list of runs follows it. */
export const RUN_CHANGED = 'automation.run_changed';

export interface RunChanged {
  tenant_id: string;
  run_id: string;
}

/** What started a run: `event_id` is the contact's id for `contact_added`, else the event's id. */
export interface RunTrigger {
  type: 'contact_added' | 'email_event' | 'custom_event';
  event_id: string;
  /** The event's type (email_event) or name (custom_event). */
  name?: string;
}

export interface RunStart {
  tenant_id: string;
  automation_id: string;
  contact_id: string;
  email: string;
  trigger: RunTrigger;
  /** The triggering event's data, merged over the contact's own when a send renders. */
  data: Record<string, unknown>;
}

export type RunEntryType =
  'run.started' | 'step.waiting' | 'step.sent' | 'step.condition' | 'run.completed' | 'run.stopped' | 'run.failed';

/** One line of a run's timeline. */
export interface RunEntry {
  at: string;
  type: RunEntryType;
  /** The step it is about; null for the run's start and end. */
  step: string | null;
  data: Record<string, unknown>;
}

/** Why a run stopped before its end: it is checked at each step. */
export type StopReason =
  'automation_disabled' | 'automation_deleted' | 'contact_removed' | 'contact_unsubscribed' | 'recipient_suppressed';

export interface RunState extends AutomationRun {
  trigger: RunTrigger;
  data: Record<string, unknown>;
  /** The step the next turn starts at; `end` once there is none. */
  next: string;
  /** The message each send step made, by step id. */
  sends: Record<string, string>;
  timeline: RunEntry[];
}

/** A run as its readers see it. */
export type RunView = Omit<RunState, 'tenant_id' | 'next' | 'sends'>;

export const viewOf = ({ tenant_id: _t, next: _n, sends: _s, ...view }: RunState): RunView => view;

/** The run as the catalog lists it. */
export const listedOf = (tenantId: string, r: RunView): AutomationRun => ({
  id: r.id,
  tenant_id: tenantId,
  automation_id: r.automation_id,
  contact_id: r.contact_id,
  email: r.email,
  status: r.status,
  reason: r.reason,
  started_at: r.started_at,
  updated_at: r.updated_at,
});

export type SendStep = Extract<AutomationStep, { type: 'send' }>;

/** What a send step asks the gate for (gate/automations.ts). */
export interface RunSend {
  tenant_id: string;
  /** The automation's key and mode: its sends are that key's, captured when `sandbox`. */
  key_id: string;
  sandbox: boolean;
  run_id: string;
  step: SendStep;
  contact: Contact;
  data: Record<string, unknown>;
}
