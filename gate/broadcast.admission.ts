// The gate as a BroadcastActor admits its contacts' messages (the ContactAdmitter it is handed):
// each contact of a page a message of its own on the broadcast stream, through the same gate as
// every send, several under way at once. No all-or-nothing batch (actors/batch): each message
// stands alone, and its idempotency key (broadcast and contact) makes a page run again after a
// crash a replay of what it had admitted; a batch's commit would cost each message two more turns.
import { GatepostError } from '../errors/errors.catalog.ts';
import type { Catalog } from '../store/catalog.port.ts';
import type { ContactAdmitter, ContactOutcome } from '../actors/broadcast/broadcast.state.ts';
import { contactAdmission, type ContactMessage } from './contact.draft.ts';
import { createGate, type GateDeps } from './gate.ts';

/** Admissions of one page under way at once: enough to keep the runtime's group commits full. */
const IN_FLIGHT = 64;

export function broadcastAdmitter(deps: Omit<GateDeps, 'invoker'> & { catalog: Catalog }): ContactAdmitter {
  return {
    async admit(invoker, broadcastId, plan, contacts) {
      const tenant = await deps.catalog.getTenant(plan.tenant_id);
      if (!tenant) throw new Error(`the tenant ${plan.tenant_id} of broadcast ${broadcastId} is gone`);
      // Admission's actor calls are made from the fan-out's turn.
      const gate = createGate({ ...deps, invoker });
      const sender = { tenant, key: plan.key };
      const message: ContactMessage = {
        source: broadcastId,
        ingress: 'broadcast',
        stream: 'broadcast',
        ...plan.content,
        data: plan.data,
        sandbox: plan.sandbox,
        tags: [`broadcast:${broadcastId}`],
        origin: (contact) => ({ kind: 'broadcast', id: broadcastId, audience_id: plan.audience_id, contact_id: contact.id }),
      };
      const outcomes: ContactOutcome[] = new Array(contacts.length);
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < contacts.length; i = next++) {
          try {
            await gate.admit(contactAdmission(sender, message, contacts[i]!));
            outcomes[i] = { admitted: true };
          } catch (error) {
            // A refusal is the contact's outcome; anything else fails the page, which runs again
            // (the other workers take no more contacts, and the page ends once theirs are answered).
            if (!(error instanceof GatepostError) || error.status >= 500) {
              next = contacts.length;
              throw error;
            }
            outcomes[i] = { refused: error.code, ...(error.retryAfter === undefined ? {} : { retry_after: error.retryAfter }) };
          }
        }
      };
      const ended = await Promise.allSettled(Array.from({ length: Math.min(IN_FLIGHT, contacts.length) }, worker));
      const failed = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
      if (failed) throw failed.reason;
      return outcomes;
    },
  };
}
