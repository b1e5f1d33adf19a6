// Merge variables into content with Handlebars. HTML is escaped by default ({{name}}); subject
// and text are plain text, so nothing is escaped there. Every render is held to the limits of
// render.limits.ts; anything beyond plain {{path}}s renders on the render thread (render.thread.ts).
import Handlebars from 'handlebars';
import { LRUCache } from 'lru-cache';
import { GatepostError } from '../errors/errors.catalog.ts';
import {
  DEFAULT_RENDER_LIMITS,
  MAX_SOURCE_CHARS,
  overBytes,
  overLimit,
  sourceTooLarge,
  type RenderLimits,
} from './render.limits.ts';
import { renderOnThread } from './render.thread.ts';

const hasPlaceholder = (source: string) => source.includes('{{');

// Most templates only fill values in: "Hi {{name}}, your code is {{code}}". Handlebars sets up a
// runtime container (helpers, prototype-access rules) for every call, which was most of what a
// send allocated; a template made only of text and {{path}} mustaches is filled here instead,
// with Handlebars' own escaping. Anything else, and any value that is not a primitive in an own
// property, goes to Handlebars, so the output is always the one Handlebars gives.

/** Text, then a path to fill in, then text, ...: always one more text than paths. */
interface SimpleTemplate {
  texts: string[];
  paths: string[][];
}

// The helper names templates have (render.handlebars.ts), literals and keywords, which Handlebars reads as something else than a lookup.
const NOT_LOOKUPS = new Set([
  'helperMissing',
  'blockHelperMissing',
  'each',
  'if',
  'unless',
  'with',
  'this',
  'else',
  'true',
  'false',
  'null',
  'undefined',
]);
const MUSTACHE = /\{\{\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\}\}/g;

function parseSimple(source: string): SimpleTemplate | null {
  // Backslashes escape mustaches; a third brace, or any other {{, is a form of its own.
  if (source.includes('\\') || source.includes('{{{') || source.includes('}}}')) return null;
  const texts: string[] = [];
  const paths: string[][] = [];
  let at = 0;
  for (const m of source.matchAll(MUSTACHE)) {
    const path = m[1]!.split('.');
    if (NOT_LOOKUPS.has(path[0]!)) return null;
    texts.push(source.slice(at, m.index));
    paths.push(path);
    at = m.index + m[0].length;
  }
  texts.push(source.slice(at));
  return texts.some((t) => t.includes('{{')) ? null : { texts, paths };
}

// Sized by the source's length: a parsed template holds its text once more, in pieces.
const simpleTemplates = new LRUCache<string, SimpleTemplate | false>({
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_v, source) => source.length || 1,
});

function simpleTemplate(source: string): SimpleTemplate | null {
  let parsed = simpleTemplates.get(source);
  if (parsed === undefined) simpleTemplates.set(source, (parsed = parseSimple(source) ?? false));
  return parsed || null;
}

/**
 * The template filled with `data`, or null when only Handlebars can say what it gives. Throws
 * OutputTooLarge as soon as the output passes `maxBytes` in characters (each at least a byte),
 * and at the end if it does in bytes.
 */
function fillSimple(template: SimpleTemplate, data: Record<string, unknown>, escape: boolean, maxBytes: number): string | null {
  let out = template.texts[0]!;
  for (let i = 0; i < template.paths.length; i++) {
    let value: unknown = data;
    for (const key of template.paths[i]!) {
      if (value === null || value === undefined) break;
      if (!Object.hasOwn(value, key)) return null;
      value = (value as Record<string, unknown>)[key];
    }
    if ((typeof value === 'object' && value !== null) || typeof value === 'function') return null;
    const text = value === null || value === undefined ? '' : String(value);
    out += (escape ? Handlebars.Utils.escapeExpression(text) : text) + template.texts[i + 1]!;
    if (out.length > maxBytes) throw new OutputTooLarge();
  }
  if (overBytes(out, maxBytes)) throw new OutputTooLarge();
  return out;
}

class OutputTooLarge extends Error {}

/**
 * Renders one field within `limits`. `field` names it in the error a caller sees when the source
 * is not a valid template (an unclosed {{, an unknown helper), or when rendering it went over a limit.
 */
export async function renderField(
  field: string,
  source: string,
  data: Record<string, unknown>,
  kind: 'html' | 'text',
  limits: RenderLimits = DEFAULT_RENDER_LIMITS,
): Promise<string> {
  // Before any work, and before anything is cached: a 15 MB source was kept by the caches.
  if (source.length > MAX_SOURCE_CHARS) throw sourceTooLarge(field);
  if (!hasPlaceholder(source)) return source;
  const simple = simpleTemplate(source);
  if (simple) {
    try {
      const filled = fillSimple(simple, data, kind === 'html', limits.maxOutputBytes);
      if (filled !== null) return filled;
    } catch (error) {
      if (error instanceof OutputTooLarge) throw overLimit(field, 'output_size', limits);
      throw error;
    }
  }
  const outcome = await renderOnThread(source, data, kind, limits);
  if ('ok' in outcome) return outcome.ok;
  if ('limit' in outcome) throw overLimit(field, outcome.limit, limits);
  throw new GatepostError('template_render_failed', `The ${field} could not be rendered: ${outcome.failed}`, {
    details: [{ field, message: outcome.failed.replace(/\s+/g, ' ').slice(0, 300) }],
  });
}

/** Problems with a template source (unbalanced blocks, bad syntax), for refusing it when it is stored. */
export function templateSyntaxProblem(source: string): string | null {
  if (source.length > MAX_SOURCE_CHARS) return `over ${MAX_SOURCE_CHARS} characters`;
  try {
    Handlebars.parse(source);
    return null;
  } catch (error) {
    return (error as Error).message.replace(/\s+/g, ' ').slice(0, 300);
  }
}
