// Style P as the HTTP server takes it: its routes, and how they appear in the OpenAPI document.
import { z } from 'zod';
import type { CompatDeps, CompatIngress, CompatOperation } from '../compat.ingress.ts';
import { stylePRoutes } from './style-p.route.ts';
import { MAX_BATCH, StylePError, StylePMessage, StylePResult, StylePTemplatedMessage } from './style-p.schema.ts';

const AUTH =
  'a live or sandbox API key in the X-Postmark-Server-Token header (the official Postmark clients send it) or X-Compat-Server-Token; ' +
  'an optional Idempotency-Key header makes retries safe';

const refusals: CompatOperation['responses'] = {
  401: { description: 'Missing, unknown or public key: ErrorCode 10.', schema: StylePError },
  415: { description: 'The body is not JSON: ErrorCode 409.', schema: StylePError },
  422: {
    description:
      'Refused: ErrorCode 300 (invalid request, attachments), 406 (inactive recipient), 1101 (no such template), 402 (bad JSON).',
    schema: StylePError,
  },
  429: { description: "Over the tenant's quota, or the same Idempotency-Key under way: ErrorCode 429.", schema: StylePError },
  500: { description: 'Nothing was sent; retry with the same Idempotency-Key: ErrorCode 100.', schema: StylePError },
};

const batchRefusals: CompatOperation['responses'] = {
  ...refusals,
  422: { description: `Not a JSON array, or more than ${MAX_BATCH} messages (ErrorCode 410).`, schema: StylePError },
};

const operation = (url: string, summary: string, body: z.ZodType, ok: z.ZodType, batch: boolean): CompatOperation => ({
  method: 'POST',
  url,
  summary,
  tag: 'Style P (Postmark-compatible)',
  auth: AUTH,
  body: { 'application/json': body },
  responses: {
    200: {
      description: batch
        ? 'One result per message, in order, each with its own ErrorCode; the batch is admitted as a whole.'
        : 'Sent: ErrorCode 0 and the MessageID.',
      schema: ok,
    },
    ...(batch ? batchRefusals : refusals),
  },
});

const Batch = <T extends z.ZodType>(message: T) => z.array(message).min(1).max(MAX_BATCH);

export function stylePIngress(deps: CompatDeps): CompatIngress {
  return {
    plugin: stylePRoutes(deps),
    operations: [
      operation('/email', 'Send one email (Style P)', StylePMessage, StylePResult, false),
      operation('/email/batch', `Send up to ${MAX_BATCH} emails (Style P)`, Batch(StylePMessage), z.array(StylePResult), true),
      operation('/email/withTemplate', 'Send one email from a template (Style P)', StylePTemplatedMessage, StylePResult, false),
      operation(
        '/email/batchWithTemplates',
        `Send up to ${MAX_BATCH} emails from templates (Style P)`,
        z.object({ Messages: Batch(StylePTemplatedMessage) }),
        z.array(StylePResult),
        true,
      ),
    ],
  };
}
