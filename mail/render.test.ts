import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { renderField } from './render.ts';

/** What Handlebars itself gives, with the options renderField uses. */
const handlebars = (source: string, data: Record<string, unknown>, kind: 'html' | 'text') =>
  Handlebars.compile(source, { noEscape: kind === 'text', strict: false, knownHelpersOnly: false })(data);

// A small deterministic generator (mulberry32): the same cases on every run.
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['name', 'code', 'a', 'user', 'length', 'toString', 'constructor', '__proto__', 'if', 'this', 'else', 'missing'];
const TEXTS = ['Hi ', ', ', '<p>', '</p>', ' & ', '"quoted" ', "it's ", '{', '}', '{ {', ' = ', '`', '\\', '\n', 'é ✓ ', ''];
const MUSTACHES = [
  (p: string) => `{{${p}}}`,
  (p: string) => `{{ ${p} }}`,
  (p: string) => `{{{${p}}}}`,
  (p: string) => `{{~${p}}}`,
  (p: string) => `{{#if ${p}}}yes{{else}}no{{/if}}`,
  (p: string) => `{{!${p}}}`,
  (p: string) => `\\{{${p}}}`,
  (p: string) => `{{${p}}}}`,
];
const VALUES: unknown[] = ['Ann', '<b>&"\'`=</b>', '', 0, -0, 1234, 1e21, true, false, null, ['x', 'y'], { toHTML: 'no' }, { b: 'deep' }, 'ok'];

function template(rand: () => number): string {
  let out = '';
  const parts = 1 + Math.floor(rand() * 5);
  for (let i = 0; i < parts; i++) {
    out += TEXTS[Math.floor(rand() * TEXTS.length)]!;
    const path = Array.from({ length: 1 + Math.floor(rand() * 2) }, () => NAMES[Math.floor(rand() * NAMES.length)]!).join('.');
    const form = rand() < 0.6 ? MUSTACHES[0]! : MUSTACHES[Math.floor(rand() * MUSTACHES.length)]!;
    out += form(path);
  }
  return out;
}

function data(rand: () => number): Record<string, unknown> {
  const d: Record<string, unknown> = {};
  for (const name of NAMES) {
    if (rand() < 0.5) continue;
    const v = VALUES[Math.floor(rand() * VALUES.length)];
    d[name] = rand() < 0.2 ? { name: v, code: 7, length: v } : v;
  }
  return JSON.parse(JSON.stringify(d)) as Record<string, unknown>;
}

/** The output, or the error message: renderField wraps Handlebars' errors in its own. */
function outcome(render: () => string): string {
  try {
    return render();
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe('renderField', () => {
  it('fills "{{name}}" placeholders with the data, escaping HTML in html only', () => {
    const data = { name: '<Ann & "Bo">', user: { name: 'Cy' }, n: 3 };
    expect(renderField('html', '<p>Hi {{name}}, {{ user.name }}: {{n}}{{missing}}</p>', data, 'html')).toBe(
      '<p>Hi &lt;Ann &amp; &quot;Bo&quot;&gt;, Cy: 3</p>',
    );
    expect(renderField('subject', 'Hi {{name}}', data, 'text')).toBe('Hi <Ann & "Bo">');
  });

  it('gives what Handlebars gives, for 5,000 generated templates and data', () => {
    const rand = random(42);
    for (let i = 0; i < 5000; i++) {
      const source = template(rand);
      const d = data(rand);
      for (const kind of ['html', 'text'] as const) {
        const ours = outcome(() => renderField('f', source, d, kind));
        const theirs = outcome(() => handlebars(source, d, kind));
        if (theirs.startsWith('error: ')) expect(ours, `${kind} ${JSON.stringify(source)}`).toMatch(/^error: /);
        else expect(ours, `${kind} ${JSON.stringify(source)} with ${JSON.stringify(d)}`).toBe(theirs);
      }
    }
  });

  it('refuses an invalid template with an error naming the field', () => {
    expect(() => renderField('html', '<p>{{#if x}}</p>', {}, 'html')).toThrow(/html could not be rendered/);
  });
});
