// The structured JSON log (pino, the logger Fastify is built for): one line per HTTP request with
// its request id, and lines of the actors' work (delivery attempts) naming the request that made
// the message. Credentials are never written: the paths below are redacted wherever they occur.
import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
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
 * written asynchronously, lines gathered for up to 20 ms into one write (`gatheredLines`): no
 * request waits on the pipe. `flush` before exiting.
 */
export function gatepostLog(level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino(
    { level, base: null, redact: { paths: REDACTED, censor: '[redacted]' } },
    destination ?? gatheredLines(pino.destination({ dest: 1, sync: false })),
  );
}

/** How long a line may wait to be written, and how much may wait. */
const LINES_WAIT_MS = 20;
const LINES_MAX_CHARS = 16_384;

/**
 * `out` given the lines in one string at most LINES_WAIT_MS after the first of them, or once they
 * are LINES_MAX_CHARS long. Written a line at a time (sonic-boom writes each at once while no write
 * is under way), the writes to the pipe took 473 ms of the event loop's 15.4 s busy in bench:send
 * --observability, about 3 % of its time; gathered, 135 ms of 14.0 s (2026-11-29). What is
 * gathered is lost if the process dies at once, as sonic-boom's own buffer is.
 */
export function gatheredLines(out: Pick<ReturnType<typeof pino.destination>, 'write' | 'flush'>): DestinationStream & {
  flush(done?: (error?: Error) => void): void;
} {
  let lines: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | null = null;
  const writeOut = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (lines.length === 0) return;
    out.write(lines.join(''));
    lines = [];
    chars = 0;
  };
  return {
    write(line: string) {
      lines.push(line);
      chars += line.length;
      if (chars >= LINES_MAX_CHARS) writeOut();
      else timer ??= setTimeout(writeOut, LINES_WAIT_MS);
    },
    flush(done) {
      writeOut();
      out.flush(done);
    },
  };
}

/** A request id a client may choose: up to 128 of these characters; anything else is replaced. */
const CLIENT_ID = /^[\w.:@/+=-]{1,128}$/;

/** The request's id: the client's `x-request-id` when it is a sane one, a new `req_` id otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given) ? given : newId('req');
}

const REQ_ID = 'req_id';

/**
 * Fastify's request log reduced to one line, written when the answer is sent (Fastify's own is
 * two, and logs the request object). The line carries the request id (`req_id`), never a header.
 * A request that answers is logged by a child of the process's log without its redaction: the
 * line's fields are known and hold no credential, and the redaction (pino 10 walks every line its
 * wildcard paths could match) cost about 7 us a line; a failed request's line, which carries the
 * error, goes through the request's own (redacting) logger.
 */
export class RequestLog extends LogController {
  private lines: Logger | null = null;

  constructor() {
    super({ requestIdLogLabel: REQ_ID });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // To the hundredth of a millisecond: the rest is noise, and long to write.
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    const fields = { method: request.method, url: request.url, status: reply.statusCode, ms };
    if (error) {
      reply.log.error({ ...fields, err: error }, 'request failed');
      return;
    }
    // A scope's level (the tracking links' `warn`) leaves out its requests' lines.
    if (!atLeast(reply.log.level, 'info')) return;
    this.lines ??= (request.server.log as Logger).child({}, { redact: [] });
    this.lines.info({ [REQ_ID]: request.id, ...fields }, 'request');
  }
}

/**
 * Fastify's `childLoggerFactory`: a request's logger that becomes a pino child (with the request
 * id bound) only when something logs on it. Most requests log only their line (RequestLog, which
 * needs no child), and a child a request cost about 5 us of the event loop.
 */
export const lazyRequestLogger = (
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger => new LazyRequestLogger(parent, bindings, options);

/** Whether a logger at `level` writes lines of level `line`. */
const atLeast = (level: string, line: string): boolean =>
  (pino.levels.values[line] ?? 0) >= (pino.levels.values[level] ?? Infinity);

type Bindings = Record<string, unknown>;
type ChildLoggerOptions = Parameters<FastifyBaseLogger['child']>[1];
type Args = Parameters<FastifyBaseLogger['info']>;

class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.options?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  fatal(...args: Args): void {
    this.#real().fatal(...args);
  }
  error(...args: Args): void {
    this.#real().error(...args);
  }
  warn(...args: Args): void {
    this.#real().warn(...args);
  }
  info(...args: Args): void {
    this.#real().info(...args);
  }
  debug(...args: Args): void {
    this.#real().debug(...args);
  }
  trace(...args: Args): void {
    this.#real().trace(...args);
  }
  silent(...args: Args): void {
    this.#real().silent(...args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}
