// Reading a message for a key: the record, its content and its timeline, without the reader
// knowing the message's actor, and only where the key may read it (tenancy/permissions.ts). The
// timeline is the actor's events with the message's opens and clicks, which the catalog keeps.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { GatepostError } from '../errors/errors.catalog.ts';
import { timelineOf, type EventEnvelope } from '../events/email.event.ts';
import type { RenderedContent } from '../mail/content.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import type { MessageRecord } from '../actors/message/message.state.ts';
import type { ApiKey, Catalog } from '../store/catalog.port.ts';
import type { StoredEvent } from '../events/email.event.ts';
import { mayReadMessage } from '../tenancy/permissions.ts';

/** `msg_` and 26 base32 characters (lib/ids.ts). */
const MESSAGE_ID = /^msg_[0-9a-z]{26}$/;

export interface MessageRead {
  record: MessageRecord;
  content: RenderedContent;
  /** Every event so far, in its envelope, oldest first. */
  events: EventEnvelope[];
}

/** Where a message's timeline is: its actor, and the catalog for its opens and clicks. */
export interface MessageStores {
  invoker: Invoker;
  catalog: Catalog;
}

/** Two timelines, each oldest first, as one: by time, the actor's first where times are equal. */
function merged(own: StoredEvent[], engagement: StoredEvent[]): StoredEvent[] {
  if (engagement.length === 0) return own;
  const all: StoredEvent[] = [];
  let i = 0;
  for (const e of engagement) {
    while (i < own.length && own[i]!.created_at <= e.created_at) all.push(own[i++]!);
    all.push(e);
  }
  return all.concat(own.slice(i));
}

/**
 * Message `id` as its actor holds it, for `reader`. Throws `not_found` if there is none, and
 * alike if the key may not read it (another tenant's, a live one for a sandbox key, another
 * key's for a sending key): the reader learns nothing of a message it may not read.
 */
export async function readMessage({ invoker, catalog }: MessageStores, reader: ApiKey, id: string): Promise<MessageRead> {
  const notFound = new GatepostError('not_found', `No message ${id} exists for this key.`);
  // Not a message id at all: no actor is asked (a runtime's store may refuse such an id outright).
  if (!MESSAGE_ID.test(id)) throw notFound;
  const { record, content } = await actor(invoker, messageActor, id)
    .get(undefined)
    .catch((error: unknown) => {
      throw error instanceof GatepostError && error.code === 'not_found' ? notFound : error;
    });
  if (!mayReadMessage(reader, record)) throw notFound;
  const events = merged(record.events, await catalog.engagementOf(id));
  return { record, content, events: timelineOf({ id: record.id, events }) };
}
