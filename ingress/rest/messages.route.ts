// GET /v1/messages/:id: a message and its full event history, to a key that may read it
// (gate/messages.ts).
import { readMessage, type MessageStores } from '../../gate/messages.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, MessageView } from './schemas.ts';

export function messageRoutes(app: ZodApp, stores: MessageStores): void {
  app.get(
    '/v1/messages/:id',
    {
      config: { access: 'read_messages' },
      schema: {
        tags: ['Messages'],
        summary: 'Get a message and its timeline',
        params: IdParam,
        response: {
          200: answer('The message with every event so far, oldest first.', MessageView),
          404: refusal(
            "No message with this id that the key may read: another tenant's, a live one for a sandbox key, another key's for a sending_access key.",
          ),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const sender = senderOf(request);
      const { record, content, events } = await readMessage(stores, sender.key, params.id);
      return reply.code(200).send({
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
      });
    },
  );
}
