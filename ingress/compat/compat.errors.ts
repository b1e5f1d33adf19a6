// What the provider styles share about failures: a malformed multipart body is the client's fault,
// and every refusal carries its code in a header, which the providers' bodies have no room for
// (the browser SDK's answers too). Any failure becomes a coded error in ingress/rest/errors.http.ts's
// codedError, for every ingress.
import type { FastifyError, FastifyReply } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';

/** Style S's and Style M's words for a body, a file or a number of parts over its limit. */
export const BODY_TOO_LARGE = 'The request body is larger than Gatepost accepts.';

/** On every refusal: the Gatepost error code (docs/errors.md). */
export const ERROR_CODE_HEADER = 'Gatepost-Error-Code';

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
