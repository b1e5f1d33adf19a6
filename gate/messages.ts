// Reading a message for its tenant: the record, its content and its timeline, without the
// reader knowing the message's actor.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { timelineOf, type EventEnvelope } from '../events/email.event.ts';
import type { RenderedContent } from '../mail/content.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import type { MessageRecord } from '../actors/message/message.state.ts';

export interface MessageRead {
  record: MessageRecord;
  content: RenderedContent;
  /** Every event so far, in its envelope, oldest first. */
  events: EventEnvelope[];
}

/** Message `id` as its actor holds it; throws `not_found` if there is none. */
export async function readMessage(invoker: Invoker, id: string): Promise<MessageRead> {
  const { record, content } = await actor(invoker, messageActor, id).get(undefined);
  return { record, content, events: timelineOf(record) };
}
