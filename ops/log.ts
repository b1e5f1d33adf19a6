// The structured JSON log (pino, the logger Fastify is built for): one line per HTTP request with
// its request id, and lines of the actors' work (delivery attempts) naming the request that made
// the message. Credentials are never written: the paths below are redacted wherever they occur.
import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino, type DestinationStream, type LevelWithSilent, type Logger } from 'pino';

export type { Logger };
import { newId } from '../lib/ids.ts';

/**
 * Where an API key or a token could sit in a logged object: the Authorization header (and the
 * compatibility styles' own key headers), and any `key`, `password`, `token` or `secret` field.
 * pino's redaction is compiled once (fast-redact), so it costs nothing on lines without them.
 */
export const REDACTED = [
  'key',
  'password',
  'token',
  'secret',
  '*.key',
  '*.password',
  '*.token',
  '*.secret',
  'headers.authorization',
  'headers["x-postmark-server-token"]',
  'headers["x-compat-server-token"]',
  'req.headers.authorization',
  'req.headers["x-postmark-server-token"]',
  'req.headers["x-compat-server-token"]',
];

/**
 * The process's log: JSON lines on stdout (or `destination`), at `level` and above. Stdout is
 * written asynchronously (a line waits only for the write before it, so lines under load go out
 * together): no request waits on the pipe. `flush` before exiting.
 */
export function gatepostLog(level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino(
    { level, base: null, redact: { paths: REDACTED, censor: '[redacted]' } },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A request id a client may choose: up to 128 of these characters; anything else is replaced. */
const CLIENT_ID = /^[\w.:@/+=-]{1,128}$/;

/** The request's id: the client's `x-request-id` when it is a sane one, a new `req_` id otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given) ? given : newId('req');
}

/**
 * Fastify's request log reduced to one line, written when the answer is sent (Fastify's own is
 * two, and logs the request object). The line carries the request id (`req_id`), never a header.
 */
export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'req_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // To the hundredth of a millisecond: the rest is noise, and long to write.
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    const fields = { method: request.method, url: request.url, status: reply.statusCode, ms };
    if (error) reply.log.error({ ...fields, err: error }, 'request failed');
    else reply.log.info(fields, 'request');
  }
}
