// Failures as the provider styles (Style S, Style M) see them before their own table maps them:
// every failure of a request becomes a coded GatepostError, and every refusal carries its code in
// a header, which the providers' bodies have no room for (the browser SDK's answers too).
import type { FastifyError, FastifyReply } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';

/** On every refusal: the Gatepost error code (docs/errors.md). */
export const ERROR_CODE_HEADER = 'Gatepost-Error-Code';

/**
 * Any failure of a request as a coded error. `contentType` says, in the style's words, what
 * body it takes, for a request sent with another.
 */
export function codedError(error: unknown, contentType: string, log: (message: string, error?: unknown) => void): GatepostError {
  if (error instanceof GatepostError) return error;
  const e = error as FastifyError;
  // The body, a file or the number of parts is over its limit.
  if (e.statusCode === 413) {
    return new GatepostError('message_too_large', 'The request body is larger than Gatepost accepts.');
  }
  if (e.statusCode === 415) return new GatepostError('invalid_request', contentType);
  if (e.statusCode && e.statusCode < 500) return new GatepostError('invalid_request', e.message);
  log('request failed', error);
  return new GatepostError('internal_error');
}

/**
 * A failure while reading a multipart body: the parser's own errors (a body cut short, a bad
 * boundary) carry no status, and mean the client sent a malformed form (a 400, not a 500);
 * @fastify/multipart's limits and coded errors carry theirs and pass as they are.
 */
export function formError(error: unknown): unknown {
  if (error instanceof GatepostError || (error as FastifyError).statusCode) return error;
  return new GatepostError('invalid_request', `The body is not valid multipart/form-data: ${(error as Error).message}`);
}

/** The headers every refusal carries, whatever the style: its code, and when to retry. */
export function refusalHeaders(reply: FastifyReply, error: GatepostError): void {
  reply.header(ERROR_CODE_HEADER, error.code);
  if (error.retryAfter !== undefined) reply.header('Retry-After', String(error.retryAfter));
}
