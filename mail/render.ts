// Merge variables into content with Handlebars. HTML is escaped by default ({{name}}); subject
// and text are plain text, so nothing is escaped there. Compiled templates are cached by source.
import Handlebars from 'handlebars';
import { GatepostError } from '../errors/errors.catalog.ts';
import { Memo } from '../lib/memo.ts';

type Compiled = Handlebars.TemplateDelegate;

const compiled = new Memo<string, Compiled>(2000);

function compile(source: string, escape: boolean): Compiled {
  return compiled.get(`${escape ? 'h' : 't'}\0${source}`, () =>
    Handlebars.compile(source, { noEscape: !escape, strict: false, knownHelpersOnly: false }),
  );
}

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

// Built-in helper names, literals and keywords, which Handlebars reads as something else than a lookup.
const NOT_LOOKUPS = new Set([
  'helperMissing',
  'blockHelperMissing',
  'each',
  'if',
  'unless',
  'with',
  'log',
  'lookup',
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

const simpleTemplates = new Memo<string, SimpleTemplate | null>(2000);

/** The template filled with `data`, or null when only Handlebars can say what it gives. */
function fillSimple(template: SimpleTemplate, data: Record<string, unknown>, escape: boolean): string | null {
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
  }
  return out;
}

/**
 * Renders one field. `field` names it in the error a caller sees when the source is not a valid
 * template (an unclosed {{, an unknown helper).
 */
export function renderField(field: string, source: string, data: Record<string, unknown>, kind: 'html' | 'text'): string {
  if (!hasPlaceholder(source)) return source;
  try {
    const simple = simpleTemplates.get(source, parseSimple);
    const filled = simple && fillSimple(simple, data, kind === 'html');
    // Prototype access stays off (Handlebars' default since 4.6): data cannot reach constructors.
    return filled ?? compile(source, kind === 'html')(data);
  } catch (error) {
    throw new GatepostError('template_render_failed', `The ${field} could not be rendered: ${(error as Error).message}`, {
      details: [{ field, message: (error as Error).message.replace(/\s+/g, ' ').slice(0, 300) }],
    });
  }
}

/** Problems with a template source (unbalanced blocks, bad syntax), for refusing it when it is stored. */
export function templateSyntaxProblem(source: string): string | null {
  try {
    Handlebars.parse(source);
    return null;
  } catch (error) {
    return (error as Error).message.replace(/\s+/g, ' ').slice(0, 300);
  }
}
