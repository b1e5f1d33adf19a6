// Handlebars as a template may use it: its own environment with only the helpers a template
// needs (if, unless, each, with) and a budget every render is held to. `log` let a request write
// lines to the server's log; `lookup` and the `inline` decorator (recursive partials) are gone too.
// Runs on the render thread (render.worker.ts); the main thread only renders plain {{path}}s.
import Handlebars from 'handlebars';
import { LRUCache } from 'lru-cache';
import { DEFAULT_RENDER_LIMITS, LimitReached, overBytes, type RenderLimits } from './render.limits.ts';

type Compiled = Handlebars.TemplateDelegate;

const handlebars = Handlebars.create();
handlebars.unregisterHelper('log');
handlebars.unregisterHelper('lookup');
handlebars.unregisterDecorator('inline');

/** What the render under way may spend and has spent; one render runs at a time on a thread. */
const spent = { limits: DEFAULT_RENDER_LIMITS, iterations: 0, output: 0 };

// {{#each}} (and {{#list}}, which Handlebars runs through `each`) counts every iteration and the
// output of each, as it goes: a loop over the budget stops at once, not after building its output.
// Output is counted at every level of nesting, so nested loops meet the limit somewhat sooner; it
// is counted in characters (each at least a UTF-8 byte), and the whole output in bytes at the end.
const builtinEach = handlebars.helpers.each!;
handlebars.registerHelper('each', function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
  const body = options.fn;
  const counted = (value: unknown, opts?: Handlebars.RuntimeOptions) => {
    if (++spent.iterations > spent.limits.maxIterations) throw new LimitReached('iterations');
    const out = body(value, opts);
    spent.output += out.length;
    if (spent.output > spent.limits.maxOutputBytes) throw new LimitReached('output_size');
    return out;
  };
  return builtinEach.call(this, context, { ...options, fn: Object.assign(counted, body) });
});

// Keyed by escaping and source; sized by what a compiled template holds on the heap: about 8 KiB
// plus 32 bytes a source character (11.1 KB measured for 115 characters, 40.4 KB for 1,060). Sized
// by the source's length alone, 16 MiB of sources stood for over a gigabyte of compiled templates,
// and ten thousand small ones outgrew the render thread's 64 MB heap (mail/render.test.ts).
const compiled = new LRUCache<string, Compiled>({
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_v, key) => 8192 + 32 * key.length,
});

/** Renders `source` with Handlebars within the budget; throws `LimitReached`, or Handlebars' own error. */
export function renderHandlebars(
  source: string,
  data: Record<string, unknown>,
  kind: 'html' | 'text',
  limits: RenderLimits,
): string {
  const key = `${kind === 'html' ? 'h' : 't'}\0${source}`;
  let template = compiled.get(key);
  if (!template) {
    // Prototype access stays off (Handlebars' default since 4.6): data cannot reach constructors.
    // The compiler takes log and lookup for known helpers and would call them directly.
    template = handlebars.compile(source, {
      noEscape: kind === 'text',
      strict: false,
      knownHelpersOnly: false,
      knownHelpers: { log: false, lookup: false },
    });
    compiled.set(key, template);
  }
  spent.limits = limits;
  spent.iterations = 0;
  spent.output = 0;
  const out = template(data);
  if (overBytes(out, limits.maxOutputBytes)) throw new LimitReached('output_size');
  return out;
}
