// Coded errors on HTTP, for every ingress: the native error body, zod issues as `details`, the one
// Idempotency-Key parser, and the one mapper of any request failure (Fastify's own refusals,
// request validation) to a coded error, which each ingress then puts on the wire with its table.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GatepostError, errorCatalog, type ErrorDetail } from '../../errors/errors.catalog.ts';
import { IdempotencyKey } from './schemas.ts';

/** `{"error": {"code", "message", "details"}}`, the native error body of DESIGN.md. */
export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(errorCatalog) as [keyof typeof errorCatalog, ...(keyof typeof errorCatalog)[]]),
      message: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ description: 'Every native error: a stable code, a human sentence, and the fields at fault.' });

/** What `details` needs of a zod issue, whether from a ZodError or from Fastify's validation error. */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

function detailsOf(issues: Issue[], prefix: string): ErrorDetail[] {
  const at = (path: PropertyKey[]) => [prefix, ...path.map(String)].filter(Boolean).join('.') || '(body)';
  return issues.flatMap((issue) =>
    // An unknown field is named itself, so the sender sees which one to remove.
    issue.code === 'unrecognized_keys' && issue.keys
      ? issue.keys.map((key) => ({ field: at([...issue.path, key]), message: 'unknown field' }))
      : [{ field: at(issue.path), message: issue.message }],
  );
}

export function zodDetails(error: z.ZodError, prefix = ''): ErrorDetail[] {
  return detailsOf(error.issues as Issue[], prefix);
}

/** `Invalid <where>: field: message; …`, the one wording of an invalid request part. */
function invalidPart(where: string, details: ErrorDetail[]): GatepostError {
  return new GatepostError('invalid_request', `Invalid ${where}: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, {
    details,
  });
}

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidPart(where, zodDetails(result.error, where === 'body' ? '' : where));
  return result.data;
}

/** Fastify's names of a request's parts, as the error message names them. */
const PART_NAMES: Record<string, string> = { body: 'body', params: 'path', querystring: 'query', headers: 'headers' };

/**
 * A route schema's refusal (FST_ERR_VALIDATION, the zod issues on `error.validation`) as the
 * same coded error a handler's own parse gives.
 */
function validationError(error: FastifyError): GatepostError | null {
  if (!hasZodFastifySchemaValidationErrors(error)) return null;
  const where = PART_NAMES[error.validationContext ?? 'body'] ?? 'body';
  const issues = error.validation.map((v) => ({
    code: v.keyword,
    path: v.instancePath.split('/').slice(1),
    message: v.message ?? '',
    keys: (v.params as { keys?: string[] }).keys,
  }));
  return invalidPart(where, detailsOf(issues, where === 'body' ? '' : where));
}

/** The request's `Idempotency-Key` header, the one parser of it for every HTTP ingress; undefined when absent. */
export function idempotencyKeyHeader(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  return raw === undefined ? undefined : parseOrThrow(IdempotencyKey, raw, 'Idempotency-Key header');
}

/** How an ingress words Fastify's own refusals, in its callers' terms. */
export interface RefusalWords {
  /** A body (or, in a form, a file or the number of parts) over its limit. */
  tooLarge: string;
  /** A body sent with a content type the ingress does not take: what it takes. */
  contentType: string;
  /** A body that is not valid JSON; without it, Fastify's own message. */
  invalidJson?: string;
}

/**
 * The one error mapper of every HTTP ingress: any failure of a request as a coded error, which
 * each ingress then puts on the wire with its own table. A failure that is nobody's fault but
 * Gatepost's is logged and becomes internal_error.
 */
export function codedError(error: unknown, words: RefusalWords, log: (message: string, error?: unknown) => void): GatepostError {
  if (error instanceof GatepostError) return error;
  const e = error as FastifyError;
  const invalid = validationError(e);
  if (invalid) return invalid;
  if (e.statusCode === 413) return new GatepostError('message_too_large', words.tooLarge);
  if (e.statusCode === 415) return new GatepostError('invalid_request', words.contentType);
  if (words.invalidJson && (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')) {
    return new GatepostError('invalid_request', words.invalidJson);
  }
  if (e.statusCode && e.statusCode < 500) return new GatepostError('invalid_request', e.message);
  log('request failed', error);
  return new GatepostError('internal_error');
}

export function sendError(reply: FastifyReply, error: GatepostError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('Retry-After', String(error.retryAfter));
  const { code, message, details } = error.toBody();
  return reply.code(error.status).send({ error: { code, message, ...(details ? { details } : {}) } });
}
