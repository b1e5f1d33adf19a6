// GET /v1/messages/:id: a message and its full event history, to a key that may read it
// (gate/messages.ts).
import type { Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { readMessage } from '../../gate/messages.ts';
import { ErrorBody, route, type AnyRoute } from './route.ts';
import { IdParam, MessageView } from './schemas.ts';

export function messageRoutes(invoker: Invoker): AnyRoute[] {
  return [
    route({
      method: 'GET',
      url: '/v1/messages/:id',
      tag: 'Messages',
      summary: 'Get a message and its timeline',
      access: 'read_messages',
      params: IdParam,
      responses: {
        200: { description: 'The message with every event so far, oldest first.', schema: MessageView },
        404: {
          description:
            "No message with this id that the key may read: another tenant's, a live one for a sandbox key, another key's for a sending_access key.",
          schema: ErrorBody,
        },
      },
      handler: async ({ params, sender }) => {
        const notFound = new GatepostError('not_found', `No message ${params.id} exists for this key.`);
        if (!/^msg_[0-9a-z]{26}$/.test(params.id)) throw notFound;
        const { record, content, events } = await readMessage(invoker, sender.key, params.id);
        return {
          status: 200,
          body: {
            id: record.id,
            status: record.status,
            from: content.from,
            to: content.to,
            subject: content.subject,
            stream: record.stream,
            sandbox: record.sandbox,
            tags: record.tags,
            idempotency_key: record.idempotency_key,
            message_id_header: record.message_id_header,
            created_at: record.created_at,
            send_at: record.send_at,
            events,
          },
        };
      },
    }),
  ];
}
