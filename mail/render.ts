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

/**
 * Renders one field. `field` names it in the error a caller sees when the source is not a valid
 * template (an unclosed {{, an unknown helper).
 */
export function renderField(field: string, source: string, data: Record<string, unknown>, kind: 'html' | 'text'): string {
  if (!hasPlaceholder(source)) return source;
  try {
    // Prototype access stays off (Handlebars' default since 4.6): data cannot reach constructors.
    return compile(source, kind === 'html')(data);
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
