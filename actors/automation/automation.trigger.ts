// What reaches automations from the actors' side: the lifecycle events of messages to contacts
// (each published event, handed on by the webhook fan-out, actors/webhook/fanout.ts, a topic
// having one subscriber), and the catalog's list of runs, which follows the run actors.
import { actor, type ActorRuntime, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { EmailEvent } from '../../events/email.event.ts';
import { AUTOMATION_EMAIL_EVENTS, type AutomationEmailEvent, type Catalog } from '../../store/catalog.port.ts';
import { messageActor } from '../message/message.actor.ts';
import { runClient, startRuns } from './automation.actor.ts';
import { listedOf, RUN_CHANGED, type RunChanged } from './automation.state.ts';

const TRIGGERING: ReadonlySet<string> = new Set(AUTOMATION_EMAIL_EVENTS);

/**
 * Hears each published event: an event of a message to a contact of the audience of an enabled
 * automation it triggers starts that automation's run (once per event: at-least-once delivery
 * hears it again). Mail an automation sent starts nothing, or an automation on `email.sent` that
 * sends would start itself for ever.
 */
export function automationListener(invoker: Invoker, catalog: Catalog): (e: EmailEvent) => Promise<void> {
  return async ({ tenant_id, event }) => {
    if (!TRIGGERING.has(event.type)) return;
    const automations = await catalog.automationsTriggeredBy(tenant_id, 'email_event', event.type);
    const { to, message_id } = event.data;
    if (automations.length === 0 || typeof to !== 'string' || typeof message_id !== 'string') return;
    const message = await actor(invoker, messageActor, message_id)
      .get(undefined)
      .catch((error: unknown) => {
        // Gone at the end of its retention: nothing is left to tell whose it was.
        if (error instanceof GatepostError && error.code === 'not_found') return null;
        throw error;
      });
    if (!message || message.record.ingress === 'automation') return;
    const trigger = { type: 'email_event' as const, event_id: event.id, name: event.type as AutomationEmailEvent };
    await Promise.all(
      automations.map(async (a) => {
        const contact = await catalog.getContact(tenant_id, a.audience_id, to);
        if (contact) await startRuns(invoker, [a], contact, trigger, event.data);
      }),
    );
  };
}

/**
 * The catalog's list of runs follows the run actors: each change re-reads its run, whatever order
 * changes arrive in, and the catalog keeps the latest state it was given (two mirrors of one run
 * may read it, then write, in either order).
 */
export function mirrorRuns(runtime: ActorRuntime, catalog: Catalog): void {
  runtime.subscribe(RUN_CHANGED, async ({ data }) => {
    const { tenant_id, run_id } = data as RunChanged;
    await catalog.putAutomationRun(listedOf(tenant_id, await runClient(runtime, run_id).get(undefined)));
  });
}
