// GET /v1/messages/:id: a message and its full event history, for its own tenant only (and, to a
// sandbox key, only a sandbox message).
import type { Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { readMessage } from '../../gate/messages.ts';
import { mayReadMessage } from '../../tenancy/permissions.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, MessageView } from './schemas.ts';

export function messageRoutes(app: ZodApp, invoker: Invoker): void {
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
          404: refusal('No message with this id belongs to this tenant (or, for a sandbox key, it is a live message).'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const sender = senderOf(request);
      const notFound = new GatepostError('not_found', `No message ${params.id} exists for this tenant.`);
      if (!/^msg_[0-9a-z]{26}$/.test(params.id)) throw notFound;
      const { record, content, events } = await readMessage(invoker, params.id).catch((error: unknown) => {
        throw error instanceof GatepostError && error.code === 'not_found' ? notFound : error;
      });
      // A sandbox key is told of no live message, as of another tenant's.
      if (record.tenant_id !== sender.tenant.id || !mayReadMessage(sender.key, record)) throw notFound;
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
