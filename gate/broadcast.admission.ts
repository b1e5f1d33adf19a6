// The gate as a BroadcastActor admits its contacts' messages (the ContactAdmitter it is handed):
// each contact of a page a message of its own on the broadcast stream, through the same gate as
// every send, several under way at once. No all-or-nothing batch (actors/batch): each message
// stands alone, and its idempotency key (broadcast and contact) makes a page run again after a
// crash a replay of what it had admitted; a batch's commit would cost each message two more turns.
import { GatepostError } from '../errors/errors.catalog.ts';
import type { Catalog } from '../store/catalog.port.ts';
import type { ContactAdmitter, ContactOutcome } from '../actors/broadcast/broadcast.state.ts';
import { contactAdmission, type ContactMessage } from './contact.draft.ts';
import type { Gate } from './gate.ts';

/**
 * Admissions of one page under way at once. bench:broadcast (20,000 contacts beside 50
 * transactional sends a second, a shared 2-core machine): 64 admitted 3,220/s with the
 * transactional p99 at 205 ms (8 ms alone); 16 admit 1,852/s (1.06 × single sends) with it at 110 ms.
 */
const IN_FLIGHT = 16;

/**
 * `gate` is the service's own, which calls actors through the runtime, not through the fan-out's
 * turn: each admission answers once its message is durable, so the fan-out goes at the pace of the
 * disk and a transactional send waits behind IN_FLIGHT of its messages at most. From the turn (a
 * nested call, which does not wait), a page's writes queued ahead of every other send's: in
 * bench:broadcast the transactional p99 beside a fan-out was 4.4 s (31 ms alone), now 0.1-0.2 s.
 */
export function broadcastAdmitter(gate: Gate, catalog: Catalog): ContactAdmitter {
  return {
    async admit(broadcastId, plan, contacts) {
      const tenant = await catalog.getTenant(plan.tenant_id);
      if (!tenant) throw new Error(`the tenant ${plan.tenant_id} of broadcast ${broadcastId} is gone`);
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
