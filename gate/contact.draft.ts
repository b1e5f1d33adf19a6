// A message to one contact of an audience, as the gate admits it: what a broadcast sends each
// contact, and what an automation's send step sends its run's contact. The contact is the
// recipient, and its merge variables (its `data`, `email` and `name`) fill the content. A
// broadcast's idempotency key is its id and the contact's, so admitting the same contact again is a
// replay, never a second message; an automation's is its run's and step's (gate/automations.ts).
import type { MessageOrigin } from '../events/email.event.ts';
import { formatMailbox } from '../mail/address.ts';
import type { Contact } from '../store/catalog.port.ts';
import type { Admission, Ingress, SendDraft, Sender, Stream } from './gate.ts';

/** A contact's own merge variables. */
const variablesOf = (contact: Pick<Contact, 'email' | 'name' | 'data'>) => ({
  ...contact.data,
  email: contact.email,
  ...(contact.name === null ? {} : { name: contact.name }),
});

/** What every contact of a source is sent: one content, shared merge variables, how it goes. */
export interface ContactMessage {
  /** The broadcast (or other source) sending it: with the contact's id, its idempotency key. */
  source: string;
  ingress: Ingress;
  stream: Stream;
  from: string;
  subject: string;
  html: string;
  text: string | null;
  /** Under the contact's own data, `email` and `name`. */
  data: Record<string, unknown>;
  sandbox: boolean;
  tags: string[];
  /** What the message keeps as its origin, for the contact. */
  origin: (contact: Contact) => MessageOrigin;
}

/** The idempotency key of a source's message to a contact. */
export const contactKey = (source: string, contactId: string) => `${source}:${contactId}`;

/** The admission of `message` to `contact`, as `sender`. */
export function contactAdmission(sender: Sender, message: ContactMessage, contact: Contact): Admission {
  return {
    sender,
    ingress: message.ingress,
    idempotencyKey: contactKey(message.source, contact.id),
    origin: message.origin(contact),
    draft: {
      from: message.from,
      to: formatMailbox(contact.email, contact.name),
      subject: message.subject,
      html: message.html,
      ...(message.text === null ? {} : { text: message.text }),
      data: { ...message.data, ...variablesOf(contact) },
      stream: message.stream,
      tags: message.tags,
      ...(message.sandbox ? { sandbox: true } : {}),
    },
  };
}

/** An automation's send step: a stored template. */
export interface ContactSend {
  template: string;
  from: string;
  /** Replaces the template's subject (it may hold placeholders too). */
  subject?: string;
}

/** The draft of an automation's send step to its run's contact: the event's data over the contact's own. */
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
    data: { ...variablesOf(contact), ...data },
    // Mail to a list's contacts: tracked, with List-Unsubscribe, like a broadcast's.
    stream: 'broadcast',
    ...(sandbox ? { sandbox: true } : {}),
  };
}
