// A message to one contact of an audience, as the gate admits it: what a broadcast sends each
// contact (and what an automation's send step could). The contact's merge variables fill the
// content, over the sender's shared ones; its id and the source's make the idempotency key, so
// the same source admitting the same contact again is a replay, never a second message.
import type { MessageOrigin } from '../events/email.event.ts';
import { formatMailbox } from '../mail/address.ts';
import type { Contact } from '../store/catalog.port.ts';
import type { Admission, Ingress, Sender, Stream } from './gate.ts';

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
  const data = {
    ...message.data,
    ...contact.data,
    email: contact.email,
    ...(contact.name === null ? {} : { name: contact.name }),
  };
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
      data,
      stream: message.stream,
      tags: message.tags,
      ...(message.sandbox ? { sandbox: true } : {}),
    },
  };
}
