// AutomationRunActor, one per run: one contact going through one automation's steps
// (docs/automations.md). A run is started once (its id is made from the automation, the contact
// and the triggering event, so a trigger heard twice starts it once), then moves on in turns of
// its `step` reminder: each turn first checks that the automation is still enabled and the
// contact still there, subscribed and not suppressed, then runs steps until a wait (which sets
// the reminder for its end) or the end. A send is admitted through the gate with an idempotency
// key made from the run and the step, so a turn run again never sends twice.
import { actor, defineActor, type ActorDefinition, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { derivedId } from '../../lib/ids.ts';
import { isoTime } from '../../lib/now.ts';
import type { Automation, AutomationStep, Catalog, Contact } from '../../store/catalog.port.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';
import {
  AUTOMATION_RUN_ACTOR,
  RUN_CHANGED,
  viewOf,
  type RunChanged,
  type RunEntry,
  type RunSend,
  type RunStart,
  type RunState,
  type RunTrigger,
  type RunView,
  type StopReason,
} from './automation.state.ts';

/** The target that ends a run (tenancy/automation.steps.ts checks every other one names a step). */
const END = 'end';
const STEP = 'step';

export interface AutomationRunDeps {
  catalog: Catalog;
  /** Admits a send step's message through the gate; answers the message's id, or throws a coded refusal. */
  send(args: RunSend): Promise<{ message_id: string }>;
}

/** The run of `automationId` for one contact, started by one event: the same every time it is heard. */
export const runIdOf = (automationId: string, contactId: string, eventId: string) =>
  derivedId('run', automationId, contactId, eventId);

function entry(run: RunState, type: RunEntry['type'], step: string | null, data: Record<string, unknown> = {}): void {
  const at = isoTime();
  run.timeline.push({ at, type, step, data });
  run.updated_at = at;
}

/** Saves the run and tells the catalog's list. */
function save(turn: ActorTurn, run: RunState): void {
  turn.set('run', run);
  turn.publish(RUN_CHANGED, { tenant_id: run.tenant_id, run_id: run.id } satisfies RunChanged);
}

function end(run: RunState, status: 'stopped' | 'failed' | 'completed', reason: string | null, data = {}): void {
  run.status = status;
  run.reason = reason;
  run.next = END;
  entry(run, status === 'completed' ? 'run.completed' : status === 'stopped' ? 'run.stopped' : 'run.failed', null, {
    ...(reason ? { reason } : {}),
    ...data,
  });
}

/** Why the run may not go on, checked before each of its turns' steps; null when it may. */
async function stopReason(
  turn: ActorTurn,
  catalog: Catalog,
  run: RunState,
): Promise<{ reason: StopReason; detail?: string } | { automation: Automation; contact: Contact }> {
  const automation = await catalog.getAutomation(run.tenant_id, run.automation_id);
  if (!automation) return { reason: 'automation_deleted' };
  if (!automation.enabled) return { reason: 'automation_disabled' };
  const contact = await catalog.getContact(run.tenant_id, automation.audience_id, run.contact_id);
  if (!contact) return { reason: 'contact_removed' };
  if (contact.unsubscribed) return { reason: 'contact_unsubscribed' };
  const suppression = await actor(turn, recipientActor, recipientActorId(run.tenant_id, contact.email)).check(undefined);
  if (suppression) return { reason: 'recipient_suppressed', detail: suppression.reason };
  return { automation, contact };
}

/** Whether the message a send step made was opened (or clicked): its opens and clicks are the catalog's (docs/tracking.md). */
async function messageHas(catalog: Catalog, messageId: string, type: 'email.opened' | 'email.clicked'): Promise<boolean> {
  return (await catalog.engagementOf(messageId)).some((e) => e.type === type);
}

export function automationRunActor(deps: AutomationRunDeps) {
  /** Runs steps from `run.next` until a wait or the end; every step's outcome is on the timeline. */
  async function advance(turn: ActorTurn, run: RunState): Promise<void> {
    const checked = await stopReason(turn, deps.catalog, run);
    if ('reason' in checked) return end(run, 'stopped', checked.reason, checked.detail ? { detail: checked.detail } : {});
    const { automation, contact } = checked;
    const steps = automation.steps;
    let at = run.next;
    while (at !== END) {
      const i = steps.findIndex((s) => s.id === at);
      const step: AutomationStep | undefined = steps[i];
      // Steps never change once made (tenancy/automation.steps.ts); a step missing is a definition gone wrong.
      if (!step) return end(run, 'failed', 'step_missing', { step: at });
      const following = steps[i + 1]?.id ?? END;
      if (step.type === 'wait') {
        const until = Date.now() + step.seconds * 1000;
        turn.setReminder(STEP, until);
        run.status = 'waiting';
        run.next = following;
        entry(run, 'step.waiting', step.id, { until: new Date(until).toISOString() });
        return;
      }
      if (step.type === 'send') {
        try {
          const { message_id } = await deps.send({
            tenant_id: run.tenant_id,
            key_id: automation.key_id,
            sandbox: automation.sandbox,
            run_id: run.id,
            step,
            contact,
            data: run.data,
          });
          run.sends[step.id] = message_id;
          entry(run, 'step.sent', step.id, { message_id });
        } catch (error) {
          // A refusal is the run's outcome; anything else fails the turn, and the reminder comes again.
          if (!(error instanceof GatepostError) || error.status >= 500) throw error;
          if (error.code === 'recipient_suppressed') return end(run, 'stopped', 'recipient_suppressed', { step: step.id });
          return end(run, 'failed', error.code, { step: step.id, message: error.message });
        }
        at = following;
        continue;
      }
      const [condition, of] =
        step.opened !== undefined ? (['opened', step.opened] as const) : (['clicked', step.clicked!] as const);
      const sent = run.sends[of];
      const result = sent
        ? await messageHas(deps.catalog, sent, condition === 'opened' ? 'email.opened' : 'email.clicked')
        : false;
      const target = (result ? step.then : step.else) ?? following;
      entry(run, 'step.condition', step.id, { [condition]: of, result, next: target });
      at = target;
    }
    end(run, 'completed', null);
  }

  return defineActor({
    type: AUTOMATION_RUN_ACTOR,
    methods: {
      /** Starts the run, once: a start heard again answers false and changes nothing. */
      async start(turn, args: RunStart & { first_step: string }): Promise<{ started: boolean }> {
        if (await turn.get<RunState>('run')) return { started: false };
        const at = isoTime();
        const run: RunState = {
          id: turn.actorId,
          tenant_id: args.tenant_id,
          automation_id: args.automation_id,
          contact_id: args.contact_id,
          email: args.email,
          status: 'running',
          reason: null,
          started_at: at,
          updated_at: at,
          trigger: args.trigger,
          data: args.data,
          next: args.first_step,
          sends: {},
          timeline: [],
        };
        entry(run, 'run.started', null, { trigger: args.trigger });
        // The steps run in a turn of their own, not in the caller's (a request, an event's subscriber).
        turn.setReminder(STEP, Date.now());
        save(turn, run);
        return { started: true };
      },

      async get(turn): Promise<RunView> {
        const run = await turn.get<RunState>('run');
        if (!run) throw new GatepostError('not_found', 'No run has that id.');
        return viewOf(run);
      },
    },

    async onReminder(turn, name) {
      if (name !== STEP) return;
      const run = await turn.get<RunState>('run');
      if (!run || run.next === END) return;
      run.status = 'running';
      await advance(turn, run);
      save(turn, run);
    },
  });
}

export type AutomationRunActorDefinition = ReturnType<typeof automationRunActor>;

/** A typed client of one run's actor, for callers that do not host it. */
export function runClient(invoker: Invoker, runId: string) {
  const definition = { type: AUTOMATION_RUN_ACTOR } as AutomationRunActorDefinition;
  return actor(invoker, definition as ActorDefinition<AutomationRunActorDefinition['methods']>, runId);
}

/** One contact met by a trigger: starts the run of each automation given, once per event. Answers the runs started now. */
export async function startRuns(
  invoker: Invoker,
  automations: readonly Automation[],
  contact: Pick<Contact, 'id' | 'tenant_id' | 'email'>,
  trigger: RunTrigger,
  data: Record<string, unknown>,
): Promise<string[]> {
  const started = await Promise.all(
    automations
      .filter((a) => a.steps.length > 0)
      .map(async (a) => {
        const id = runIdOf(a.id, contact.id, trigger.event_id);
        const { started } = await runClient(invoker, id).start({
          tenant_id: contact.tenant_id,
          automation_id: a.id,
          contact_id: contact.id,
          email: contact.email,
          trigger,
          data,
          first_step: a.steps[0]!.id,
        });
        return started ? [id] : [];
      }),
  );
  return started.flat();
}
