// POST /v1/emails and POST /v1/emails/batch: the native send API.
import type { FastifyRequest } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Gate, SendDraft, Sender } from '../../gate/gate.ts';
import { senderOf } from './auth.hooks.ts';
import { idempotencyKeyHeader, parseOrThrow, zodDetails } from './errors.http.ts';
import { answer, documentationOnly, refusal, type ZodApp } from './schema.http.ts';
import { BatchRequest, BatchRequestDoc, BatchResponse, SendRequest, SendResponse } from './schemas.ts';

// Every field but the key, which the gate takes apart. Listed rather than copied with a rest
// pattern (`{ idempotency_key, ...draft }`), which costs several times more on every send;
// `satisfies` fails the build when SendRequest gains a field that is not listed here.
function draftOf(body: SendRequest): SendDraft {
  return {
    from: body.from,
    to: body.to,
    reply_to: body.reply_to,
    subject: body.subject,
    html: body.html,
    text: body.text,
    template: body.template,
    data: body.data,
    send_at: body.send_at,
    stream: body.stream,
    headers: body.headers,
    tags: body.tags,
    track_opens: body.track_opens,
    track_clicks: body.track_clicks,
    list_unsubscribe: body.list_unsubscribe,
    attachments: body.attachments?.length ?? 0,
  } satisfies Record<Exclude<keyof SendRequest, 'idempotency_key'>, unknown>;
}

/** The key from the body field or the Idempotency-Key header; both may be given only if equal. */
function idempotencyKeyOf(field: string | undefined, request: FastifyRequest): string | undefined {
  const header = idempotencyKeyHeader(request);
  if (field !== undefined && header !== undefined && field !== header) {
    throw new GatepostError('invalid_request', 'The Idempotency-Key header and the idempotency_key field differ.', {
      details: [{ field: 'idempotency_key', message: 'differs from the Idempotency-Key header' }],
    });
  }
  return field ?? header;
}

async function admitItem(
  gate: Gate,
  sender: Sender,
  item: unknown,
  index: number,
  batch: { key: string | undefined; requestId: string },
) {
  const parsed = SendRequest.safeParse(item);
  if (!parsed.success) {
    const details = zodDetails(parsed.error);
    return { index, error: { code: 'invalid_request', message: 'The message is invalid.', details } };
  }
  try {
    // A batch-wide key gives each item its own derived key, so a retried batch sends nothing twice.
    const key = parsed.data.idempotency_key ?? (batch.key !== undefined ? `${batch.key}:${index}` : undefined);
    const { response, replayed } = await gate.admit({
      sender,
      ingress: 'api_batch',
      draft: draftOf(parsed.data),
      idempotencyKey: key,
      requestId: batch.requestId,
    });
    return { index, ...response, replayed };
  } catch (error) {
    if (!(error instanceof GatepostError)) throw error;
    const { code, message, details } = error.toBody();
    return { index, error: { code, message, ...(details ? { details } : {}) } };
  }
}

export function emailRoutes(app: ZodApp, gate: Gate): void {
  const refusals = {
    400: refusal('Invalid request; `details` names each bad field.'),
    401: refusal('Missing, unknown or revoked API key.'),
    403: refusal('This key may not send here (public keys are for the browser SDK).'),
  };
  app.post(
    '/v1/emails',
    {
      config: { access: 'send' },
      schema: {
        tags: ['Emails'],
        summary: 'Send an email',
        body: SendRequest,
        response: {
          202: answer(
            'Committed to the durable queue (or a replay of the first response, with `Idempotent-Replayed: true`).',
            SendResponse,
          ),
          ...refusals,
          413: refusal('The rendered message is over 1 MiB.'),
          422: refusal(
            'Refused by policy: suppressed recipient, attachments, idempotency key reused with another body, unknown template.',
          ),
          429: refusal("Over the tenant's quota; see `Retry-After`."),
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const idempotencyKey = idempotencyKeyOf(body.idempotency_key, request);
      const { response, replayed } = await gate.admit({
        sender: senderOf(request),
        ingress: 'api',
        draft: draftOf(body),
        idempotencyKey,
        requestId: request.id,
      });
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(202).send(response);
    },
  );
  app.post(
    '/v1/emails/batch',
    {
      config: { access: 'send' },
      schema: {
        tags: ['Emails'],
        summary: 'Send up to 500 emails; each passes the gate on its own',
        // The handler validates it only as a list: each item is validated on its own, and refused alone.
        body: documentationOnly(BatchRequestDoc),
        response: {
          200: answer('One result per item, in order: the send response, or the error that refused it.', BatchResponse),
          ...refusals,
        },
      },
    },
    async (request, reply) => {
      const sender = senderOf(request);
      const items = parseOrThrow(BatchRequest, request.body, 'body');
      const batchKey = idempotencyKeyOf(undefined, request);
      const results = await Promise.all(
        items.map((item, index) => admitItem(gate, sender, item, index, { key: batchKey, requestId: request.id })),
      );
      const refused = results.filter((r) => 'error' in r).length;
      return reply.code(200).send({ results, accepted: results.length - refused, refused });
    },
  );
}
