// The Style P routes (Postmark's email API): POST /email, /email/batch, /email/withTemplate and
// /email/batchWithTemplates, in a scope of their own with the server-token authentication and
// the `{ErrorCode, Message}` error format, so that Postmark's official clients work unchanged.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import type { BatchResult, SendDraft, Sender } from '../../../gate/gate.ts';
import type { KeyRing } from '../../../tenancy/keys.ts';
import { authenticateIn, permissionHook } from '../../rest/auth.hooks.ts';
import { idempotencyKeyHeader, parseOrThrow } from '../../rest/errors.http.ts';
import { answer, documentationOnly } from '../../rest/schema.http.ts';
import { compatDoc, type CompatDeps, type CompatIngress } from '../compat.ingress.ts';
import { POSTMARK, stylePFailure, wireFailure, type StylePFailure } from './style-p.errors.ts';
import { allReplayed, draftsOf, resultOf, type StylePSource } from './style-p.map.ts';
import {
  BatchOf,
  MAX_BATCH,
  StylePError,
  StylePMessage,
  StylePResult,
  StylePTemplatedMessage,
  TemplatedBatchOf,
} from './style-p.schema.ts';

/** The header Postmark's clients send, and the spec's neutral name for it; either carries the key. */
const TOKEN_HEADERS = ['x-postmark-server-token', 'x-compat-server-token'] as const;

async function authenticate(keys: KeyRing, request: FastifyRequest): Promise<Sender> {
  const given = new Set(
    TOKEN_HEADERS.map((name) => request.headers[name]).flatMap((v) => (typeof v === 'string' && v.trim() ? [v.trim()] : [])),
  );
  if (given.size === 0) {
    throw new GatepostError('missing_api_key', 'No server token: send the API key in the X-Postmark-Server-Token header.');
  }
  if (given.size > 1) {
    throw new GatepostError('invalid_api_key', 'X-Postmark-Server-Token and X-Compat-Server-Token hold different keys.');
  }
  return keys.resolve([...given][0]!);
}

function refuse(reply: FastifyReply, { status, body, retryAfter }: StylePFailure): FastifyReply {
  if (retryAfter !== undefined) reply.header('Retry-After', String(retryAfter));
  return reply.code(status).send(body);
}

/** The key of one message of a keyed request: `<key>:<j>` on /email, `<key>:<i>:<j>` in a batch. */
const derivedKey = (key: string | undefined, ...at: number[]) => (key === undefined ? undefined : [key, ...at].join(':'));

const sourceOf = (templated: boolean, raw: unknown): StylePSource =>
  templated
    ? { templated, message: parseOrThrow(StylePTemplatedMessage, raw, 'body') }
    : { templated, message: parseOrThrow(StylePMessage, raw, 'body') };

const AUTH =
  'a live or sandbox API key in the X-Postmark-Server-Token header (the official Postmark clients send it) or X-Compat-Server-Token; ' +
  'an optional Idempotency-Key header makes retries safe';

const refusals = {
  401: answer('Missing, unknown or public key: ErrorCode 10.', StylePError),
  415: answer('The body is not JSON: ErrorCode 409.', StylePError),
  422: answer(
    'Refused: ErrorCode 300 (invalid request, attachments), 406 (inactive recipient), 1101 (no such template), 402 (bad JSON).',
    StylePError,
  ),
  429: answer("Over the tenant's quota, or the same Idempotency-Key under way: ErrorCode 429.", StylePError),
  500: answer('Nothing was sent; retry with the same Idempotency-Key: ErrorCode 100.', StylePError),
};

const batchRefusals = {
  ...refusals,
  422: answer(`Not a JSON array, or more than ${MAX_BATCH} messages (ErrorCode 410).`, StylePError),
};

const Batch = <T extends z.ZodType>(message: T) => z.array(message).min(1).max(MAX_BATCH);

/**
 * A route's document: its body is validated by the handler (a batch item by item), so the schema
 * only documents it.
 */
const documented = (summary: string, body: z.ZodType, batch: boolean) => ({
  config: { access: 'send' as const },
  schema: {
    tags: ['Style P (Postmark-compatible)'],
    summary,
    ...compatDoc(AUTH),
    body: documentationOnly(body),
    response: {
      200: batch
        ? answer(
            'One result per message, in order, each with its own ErrorCode; the batch is admitted as a whole.',
            z.array(StylePResult),
          )
        : answer('Sent: ErrorCode 0 and the MessageID.', StylePResult),
      ...(batch ? batchRefusals : refusals),
    },
  },
});

export function styleP({ gate, keys, log }: CompatDeps): CompatIngress {
  function answer(reply: FastifyReply, outcomes: BatchResult[], body: unknown): FastifyReply {
    if (allReplayed(outcomes)) reply.header('Idempotent-Replayed', 'true');
    return reply.code(200).send(body);
  }

  /** One message: each To address its own message, all admitted or none (spec part 4 rule 4). */
  async function sendOne(request: FastifyRequest, reply: FastifyReply, source: StylePSource) {
    const key = idempotencyKeyHeader(request);
    const drafts = draftsOf(source);
    const outcomes = await gate.admitAll({
      sender: request.sender!,
      ingress: 'style_p',
      items: drafts.map((draft, j) => ({ draft, idempotencyKey: derivedKey(key, j) })),
      batchKey: key,
      refusals: 'all',
      requestId: request.id,
    });
    return answer(reply, outcomes, resultOf(source.message.To, drafts, outcomes));
  }

  /**
   * A batch: every message of every item in one all-or-nothing admission, so a crash or a store
   * failure rolls the whole request back; a refused message is its item's result (HTTP 200).
   */
  async function sendBatch(request: FastifyRequest, reply: FastifyReply, raws: unknown[], templated: boolean) {
    if (raws.length > MAX_BATCH) {
      return refuse(reply, {
        status: 422,
        body: { ErrorCode: POSTMARK.tooManyBatchMessages, Message: `A batch holds at most ${MAX_BATCH} messages.` },
      });
    }
    const key = idempotencyKeyHeader(request);
    const parsed = raws.map((raw): { source: StylePSource; drafts: SendDraft[] } | { refused: GatepostError } => {
      try {
        const source = sourceOf(templated, raw);
        return { source, drafts: draftsOf(source) };
      } catch (error) {
        if (error instanceof GatepostError) return { refused: error };
        throw error;
      }
    });
    const items = parsed.flatMap((p, i) =>
      'refused' in p ? [] : p.drafts.map((draft, j) => ({ draft, idempotencyKey: derivedKey(key, i, j) })),
    );
    const outcomes =
      items.length === 0
        ? []
        : await gate.admitAll({
            sender: request.sender!,
            ingress: 'style_p',
            items,
            batchKey: key,
            refusals: 'per_item',
            requestId: request.id,
          });
    let at = 0;
    const results = parsed.map((p) => {
      if ('refused' in p) return stylePFailure(p.refused).body;
      const mine = outcomes.slice(at, (at += p.drafts.length));
      return resultOf(p.source.message.To, p.drafts, mine);
    });
    return answer(reply, outcomes, results);
  }

  const plugin = async (app: FastifyInstance) => {
    await app.register(
      async (scope) => {
        authenticateIn(scope, async (request) => {
          request.sender = await authenticate(keys, request);
        });
        scope.addHook('onRequest', permissionHook);
        scope.setErrorHandler((error, _request, reply) => {
          if (error instanceof GatepostError) return refuse(reply, stylePFailure(error));
          const wire = wireFailure(error as FastifyError);
          if (wire) return refuse(reply, wire);
          log('Style P request failed', error);
          return refuse(reply, stylePFailure(new GatepostError('internal_error')));
        });
        scope.setNotFoundHandler((request, reply) =>
          refuse(
            reply,
            stylePFailure(
              new GatepostError(
                'not_found',
                `No route ${request.method} ${request.url.split('?')[0]}: Style P serves POST /email, /email/batch, /email/withTemplate and /email/batchWithTemplates.`,
              ),
            ),
          ),
        );
        scope.post('', documented('Send one email (Style P)', StylePMessage, false), (request, reply) =>
          sendOne(request, reply, sourceOf(false, request.body)),
        );
        scope.post(
          '/withTemplate',
          documented('Send one email from a template (Style P)', StylePTemplatedMessage, false),
          (request, reply) => sendOne(request, reply, sourceOf(true, request.body)),
        );
        scope.post(
          '/batch',
          documented(`Send up to ${MAX_BATCH} emails (Style P)`, Batch(StylePMessage), true),
          (request, reply) => sendBatch(request, reply, parseOrThrow(BatchOf, request.body, 'body'), false),
        );
        scope.post(
          '/batchWithTemplates',
          documented(
            `Send up to ${MAX_BATCH} emails from templates (Style P)`,
            z.object({ Messages: Batch(StylePTemplatedMessage) }),
            true,
          ),
          (request, reply) => sendBatch(request, reply, parseOrThrow(TemplatedBatchOf, request.body, 'body').Messages, true),
        );
      },
      { prefix: '/email' },
    );
  };
  return { plugin };
}
