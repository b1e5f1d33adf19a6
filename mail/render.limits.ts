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

/**
 * What one render may cost, per field: the operator's settings (config/config.ts), handed to
 * the gate and from it to every render.
 */
export interface RenderLimits {
  /** Rendered output in UTF-8 bytes, counted while {{#each}} runs and again at the end (GATEPOST_RENDER_MAX_OUTPUT_BYTES). */
  maxOutputBytes: number;
  /** Iterations of every {{#each}} of one render together, nested ones included (GATEPOST_RENDER_MAX_ITERATIONS). */
  maxIterations: number;
  /** Wall time of one render on the render thread; past it the thread is stopped and replaced (GATEPOST_RENDER_TIMEOUT_MS). */
  timeoutMs: number;
}

/** A message's size limit (1 MiB), 10,000 iterations, 1 s. */
export const DEFAULT_RENDER_LIMITS: RenderLimits = { maxOutputBytes: 1024 * 1024, maxIterations: 10_000, timeoutMs: 1_000 };

/** Heap of the render thread: a render that needs more is stopped like one past its deadline. */
export const RENDER_HEAP_MB = 64;

/**
 * Whether `text` is over `maxBytes` in UTF-8. A UTF-16 unit is 1 to 3 bytes, so only a text
 * between a third of the limit and the limit in length is measured: a send's usual output is not.
 */
export function overBytes(text: string, maxBytes: number): boolean {
  return text.length > maxBytes || (text.length * 3 > maxBytes && Buffer.byteLength(text) > maxBytes);
}

/** Merge data nested deeper than this is refused (400) before anything walks it (issue 20, item 9). */
export const MAX_DATA_DEPTH = 32;

export function dataDepthProblems(data: unknown, field = 'data'): ErrorDetail[] {
  return nestsDeeperThan(data, MAX_DATA_DEPTH)
    ? [{ field, message: `nests objects or arrays more than ${MAX_DATA_DEPTH} deep` }]
    : [];
}

export type RenderLimit = 'output_size' | 'iterations' | 'time' | 'memory';

function limitText(limit: RenderLimit, limits: RenderLimits): string {
  switch (limit) {
    case 'output_size':
      return `renders to over ${limits.maxOutputBytes} bytes, the largest output a render may give`;
    case 'iterations':
      return `runs over ${limits.maxIterations} {{#each}} iterations, the most one render may take`;
    case 'time':
      return `took over ${limits.timeoutMs} ms to render, the longest one render may take`;
    case 'memory':
      return `needed over ${RENDER_HEAP_MB} MB to render, the most one render may use`;
  }
}

/** The refusal of a source over MAX_SOURCE_CHARS. */
export function sourceTooLarge(field: string): GatepostError {
  const message = `The ${field} is over ${MAX_SOURCE_CHARS} characters; the limit of a message is 1 MiB.`;
  return new GatepostError('message_too_large', message, {
    details: [{ field, message: `over ${MAX_SOURCE_CHARS} characters` }],
  });
}

/** The refusal of a render over `limit`: its message and its detail name the field, the limit and its value. */
export function overLimit(field: string, limit: RenderLimit, limits: RenderLimits): GatepostError {
  const text = limitText(limit, limits);
  return new GatepostError('render_limit_exceeded', `The ${field} ${text}.`, {
    details: [{ field, message: `${limit}: ${text}` }],
  });
}

/** Thrown inside a render that went over a limit; the caller knows the field and makes it an `overLimit`. */
export class LimitReached extends Error {
  constructor(readonly limit: RenderLimit) {
    super(`over the ${limit} limit`);
  }
}
