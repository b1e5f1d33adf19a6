// Automations as the ingresses and the runs see the gate (docs/automations.md): a run's send step
// admitted like any send, with ingress `automation`; the triggers an ingress pulls (contacts
// added, a custom event posted) starting runs; a run read for the API. The definitions are the
// catalog's, each run the state of its actor (actors/automation).
import type { Invoker } from '../runtime/runtime.port.ts';
import { GatepostError } from '../errors/errors.catalog.ts';
import { derivedId, newId } from '../lib/ids.ts';
import { runClient, startRuns } from '../actors/automation/automation.actor.ts';
import type { RunSend, RunView } from '../actors/automation/automation.state.ts';
import type { Catalog, Contact, ContactTrigger } from '../store/catalog.port.ts';
import { contactDraft } from './contact.draft.ts';
import type { Gate } from './gate.ts';

export type { RunView };

/** A run's send step through the gate, as the key that made the automation. */
export function automationSender(
  gate: Pick<Gate, 'admit'>,
  catalog: Catalog,
): (args: RunSend) => Promise<{ message_id: string }> {
  return async ({ tenant_id, key_id, sandbox, run_id, step, contact, data }) => {
    const [tenant, keys] = await Promise.all([catalog.getTenant(tenant_id), catalog.listKeys(tenant_id)]);
    const key = keys.find((k) => k.id === key_id && k.revoked_at === null);
    if (!tenant || !key) {
      throw new GatepostError('invalid_api_key', 'The key that made the automation is revoked: its runs cannot send.');
    }
    const { response } = await gate.admit({
      sender: { tenant, key },
      ingress: 'automation',
      draft: contactDraft(step, contact, data, sandbox),
      // A step run again (its turn failed after the send) is a replay, never a second message.
      idempotencyKey: `${run_id}:${step.id}`,
    });
    return { message_id: response.id };
  };
}

/** A custom event a client posts (POST /v1/events). */
export interface CustomEvent {
  name: string;
  email: string;
  data: Record<string, unknown>;
  /** Makes a retried post the same event, which starts nothing twice. */
  idempotency_key?: string;
  /** Posted with a sandbox key: only automations that capture their sends are started (a sandbox key sends no live mail). */
  sandboxOnly: boolean;
}

export interface AutomationTriggers {
  /**
   * Contacts just added to an audience (by the API or an import): the audience's automations start
   * a run for each, then the contacts' triggers the catalog recorded with them are forgotten.
   */
  contactsAdded(tenantId: string, audienceId: string, contacts: readonly Pick<Contact, 'id' | 'email'>[]): Promise<void>;
  /**
   * Starts the runs still owed for contacts added a while ago (their request ended before it
   * started them: a crash), up to a page of them; answers how many it found. Runs are keyed by
   * automation, contact and event, so a run started twice (by the request and a sweep) is one run.
   */
  sweepContactTriggers(): Promise<number>;
  /**
   * Starts a run of each enabled automation the event's name triggers whose audience has the
   * email; `contact_not_found` when none has it (nothing is started). Answers the event's id and
   * the runs started (none for a repeat of an event).
   */
  customEvent(tenantId: string, event: CustomEvent): Promise<{ id: string; runs: string[] }>;
  /** A run of one of the tenant's automations, with its timeline; `not_found` otherwise. */
  run(tenantId: string, automationId: string, runId: string): Promise<RunView>;
}

/** Started at most this many at once (an import adds up to a thousand contacts a batch). */
const STARTS_AT_ONCE = 16;
/** A trigger this old is the sweep's: the request that added its contact would have started its runs by then. */
const SWEEP_AFTER_MS = 10_000;
const SWEEP_PAGE = 1000;

export function automationTriggers(invoker: Invoker, catalog: Catalog): AutomationTriggers {
  return {
    async contactsAdded(tenantId, audienceId, contacts) {
      if (contacts.length === 0) return;
      const automations = await catalog.automationsTriggeredBy(tenantId, 'contact_added', audienceId);
      for (let i = 0; i < contacts.length && automations.length > 0; i += STARTS_AT_ONCE) {
        await Promise.all(
          contacts
            .slice(i, i + STARTS_AT_ONCE)
            .map((c) =>
              startRuns(
                invoker,
                automations,
                { id: c.id, tenant_id: tenantId, email: c.email },
                { type: 'contact_added', event_id: c.id },
                {},
              ),
            ),
        );
      }
      await catalog.ackContactTriggers(contacts.map((c) => c.id));
    },

    async sweepContactTriggers() {
      const owed = await catalog.pendingContactTriggers(new Date(Date.now() - SWEEP_AFTER_MS).toISOString(), SWEEP_PAGE);
      const byAudience = new Map<string, ContactTrigger[]>();
      for (const t of owed) {
        const key = `${t.tenant_id} ${t.audience_id}`;
        const group = byAudience.get(key);
        if (group) group.push(t);
        else byAudience.set(key, [t]);
      }
      for (const group of byAudience.values()) {
        const { tenant_id, audience_id } = group[0]!;
        await this.contactsAdded(
          tenant_id,
          audience_id,
          group.map((t) => ({ id: t.contact_id, email: t.email })),
        );
      }
      return owed.length;
    },

    async customEvent(tenantId, { name, email, data, idempotency_key, sandboxOnly }) {
      const id = idempotency_key === undefined ? newId('evt') : derivedId('evt', tenantId, 'custom', idempotency_key);
      const automations = (await catalog.automationsTriggeredBy(tenantId, 'custom_event', name)).filter(
        (a) => a.sandbox || !sandboxOnly,
      );
      const met = await Promise.all(
        automations.map(async (a) => ({ a, contact: await catalog.getContact(tenantId, a.audience_id, email) })),
      );
      if (!met.some((m) => m.contact)) {
        throw new GatepostError(
          'contact_not_found',
          `${email} is not a contact of the audience of any enabled automation that "${name}" starts; nothing was started.`,
          { details: [{ field: 'email', message: 'no such contact in the audience of an automation of this event' }] },
        );
      }
      const runs = await Promise.all(
        met.map(({ a, contact }) =>
          contact ? startRuns(invoker, [a], contact, { type: 'custom_event', event_id: id, name }, data) : [],
        ),
      );
      return { id, runs: runs.flat() };
    },

    async run(tenantId, automationId, runId) {
      const notFound = new GatepostError('not_found', `The automation has no run "${runId}".`);
      if (!/^run_[0-9a-z]{26}$/.test(runId) || !(await catalog.getAutomation(tenantId, automationId))) throw notFound;
      const run = await runClient(invoker, runId)
        .get(undefined)
        .catch((error: unknown) => {
          throw error instanceof GatepostError && error.code === 'not_found' ? notFound : error;
        });
      if (run.automation_id !== automationId) throw notFound;
      return run;
    },
  };
}
