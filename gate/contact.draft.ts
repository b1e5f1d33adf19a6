// A send to one contact of an audience, as the gate takes it: a template rendered with the
// contact's data (its `email` and `name` too), the event's data over it. Automations send through
// it; the contact is the recipient whatever the template stores.
import { formatMailbox } from '../mail/address.ts';
import type { Contact } from '../store/catalog.port.ts';
import type { SendDraft } from './gate.ts';

export interface ContactSend {
  template: string;
  from: string;
  /** Replaces the template's subject (it may hold placeholders too). */
  subject?: string;
}

export function contactDraft(
  send: ContactSend,
  contact: Pick<Contact, 'email' | 'name' | 'data'>,
  /** Merge variables of the occasion (the triggering event's data), over the contact's own. */
  data: Record<string, unknown>,
  /** Captured, never delivered. */
  sandbox: boolean,
): SendDraft {
  return {
    from: send.from,
    to: formatMailbox(contact.email, contact.name),
    template: send.template,
    ...(send.subject === undefined ? {} : { subject: send.subject }),
    data: { ...contact.data, email: contact.email, name: contact.name, ...data },
    // Mail to a list's contacts: tracked, with List-Unsubscribe, like a broadcast's.
    stream: 'broadcast',
    ...(sandbox ? { sandbox: true } : {}),
  };
}
