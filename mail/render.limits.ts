// What one render may cost. Templates come from API clients, so a 452-byte request with four
// nested {{#each}} over 100 items must not be able to spend seconds of CPU or gigabytes of output
// (issue 20, item 3). Each limit refuses the render with `render_limit_exceeded`, naming it.
import { GatepostError, type ErrorDetail } from '../errors/errors.catalog.ts';
import { nestsDeeperThan } from '../lib/canonical.ts';

/**
 * A source (subject, html or text) larger than this is refused as `message_too_large` before it is
 * parsed or cached: the message it renders to would be over the size limit too.
 */
export const MAX_SOURCE_CHARS = 1024 * 1024;
/** Rendered output, counted while {{#each}} runs and again at the end: a message's size limit (1 MiB). */
export const MAX_OUTPUT_CHARS = 1024 * 1024;
/** Iterations of every {{#each}} of one render together, nested ones included. */
export const MAX_ITERATIONS = 10_000;
/** Wall time of one render on the render thread; past it the thread is stopped and replaced. */
export const RENDER_DEADLINE_MS = 1_000;
/** Heap of the render thread: a render that needs more is stopped like one past its deadline. */
export const RENDER_HEAP_MB = 64;

/** Merge data nested deeper than this is refused (400) before anything walks it (issue 20, item 9). */
export const MAX_DATA_DEPTH = 32;

export function dataDepthProblems(data: unknown, field = 'data'): ErrorDetail[] {
  return nestsDeeperThan(data, MAX_DATA_DEPTH)
    ? [{ field, message: `nests objects or arrays more than ${MAX_DATA_DEPTH} deep` }]
    : [];
}

export type RenderLimit = 'output_size' | 'iterations' | 'time' | 'memory';

const LIMIT_TEXT: Record<RenderLimit, string> = {
  output_size: `renders to over ${MAX_OUTPUT_CHARS} characters, the largest output a render may give`,
  iterations: `runs over ${MAX_ITERATIONS} {{#each}} iterations, the most one render may take`,
  time: `took over ${RENDER_DEADLINE_MS} ms to render, the longest one render may take`,
  memory: `needed over ${RENDER_HEAP_MB} MB to render, the most one render may use`,
};

/** The refusal of a source over MAX_SOURCE_CHARS. */
export function sourceTooLarge(field: string): GatepostError {
  const message = `The ${field} is over ${MAX_SOURCE_CHARS} characters; the limit of a message is 1 MiB.`;
  return new GatepostError('message_too_large', message, {
    details: [{ field, message: `over ${MAX_SOURCE_CHARS} characters` }],
  });
}

/** The refusal of a render over `limit`: its message and its detail name the field and the limit. */
export function overLimit(field: string, limit: RenderLimit): GatepostError {
  const message = `The ${field} ${LIMIT_TEXT[limit]}.`;
  return new GatepostError('render_limit_exceeded', message, { details: [{ field, message: `${limit}: ${LIMIT_TEXT[limit]}` }] });
}

/** Thrown inside a render that went over a limit; the caller knows the field and makes it an `overLimit`. */
export class LimitReached extends Error {
  constructor(readonly limit: RenderLimit) {
    super(`over the ${limit} limit`);
  }
}
