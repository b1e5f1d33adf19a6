// POST /v1/emails and POST /v1/emails/batch: the native send API.
import type { FastifyRequest } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Gate, SendDraft, Sender } from '../../gate/gate.ts';
import { ErrorBody, idempotencyKeyHeader, route, zodDetails, type AnyRoute } from './route.ts';
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

const replayHeaders = (replayed: boolean) => (replayed ? { 'Idempotent-Replayed': 'true' } : undefined);

async function admitItem(gate: Gate, sender: Sender, item: unknown, index: number, batchKey: string | undefined) {
  const parsed = SendRequest.safeParse(item);
  if (!parsed.success) {
    const details = zodDetails(parsed.error);
    return { index, error: { code: 'invalid_request', message: 'The message is invalid.', details } };
  }
  try {
    // A batch-wide key gives each item its own derived key, so a retried batch sends nothing twice.
    const key = parsed.data.idempotency_key ?? (batchKey !== undefined ? `${batchKey}:${index}` : undefined);
    const { response, replayed } = await gate.admit({
      sender,
      ingress: 'api_batch',
      draft: draftOf(parsed.data),
      idempotencyKey: key,
    });
    return { index, ...response, replayed };
  } catch (error) {
    if (!(error instanceof GatepostError)) throw error;
    const { code, message, details } = error.toBody();
    return { index, error: { code, message, ...(details ? { details } : {}) } };
  }
}

export function emailRoutes(gate: Gate): AnyRoute[] {
  const refusals = {
    400: { description: 'Invalid request; `details` names each bad field.', schema: ErrorBody },
    401: { description: 'Missing, unknown or revoked API key.', schema: ErrorBody },
    403: { description: 'This key may not send here (public keys are for the browser SDK).', schema: ErrorBody },
  };
  return [
    route({
      method: 'POST',
      url: '/v1/emails',
      tag: 'Emails',
      summary: 'Send an email',
      access: 'send',
      body: SendRequest,
      responses: {
        202: {
          description: 'Committed to the durable queue (or a replay of the first response, with `Idempotent-Replayed: true`).',
          schema: SendResponse,
        },
        ...refusals,
        413: { description: 'The rendered message is over 1 MiB.', schema: ErrorBody },
        422: {
          description:
            'Refused by policy: suppressed recipient, attachments, idempotency key reused with another body, unknown template.',
          schema: ErrorBody,
        },
        429: { description: "Over the tenant's quota; see `Retry-After`.", schema: ErrorBody },
      },
      handler: async ({ body, sender, request }) => {
        const idempotencyKey = idempotencyKeyOf(body.idempotency_key, request);
        const { response, replayed } = await gate.admit({ sender, ingress: 'api', draft: draftOf(body), idempotencyKey });
        return { status: 202, body: response, headers: replayHeaders(replayed) };
      },
    }),
    route({
      method: 'POST',
      url: '/v1/emails/batch',
      tag: 'Emails',
      summary: 'Send up to 500 emails; each passes the gate on its own',
      access: 'send',
      body: BatchRequest,
      bodyDoc: BatchRequestDoc,
      responses: {
        200: {
          description: 'One result per item, in order: the send response, or the error that refused it.',
          schema: BatchResponse,
        },
        ...refusals,
      },
      handler: async ({ body, sender, request }) => {
        const batchKey = idempotencyKeyOf(undefined, request);
        const results = await Promise.all(body.map((item, index) => admitItem(gate, sender, item, index, batchKey)));
        const refused = results.filter((r) => 'error' in r).length;
        return { status: 200, body: { results, accepted: results.length - refused, refused } };
      },
    }),
  ];
}
