import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { GatepostError } from '../errors/errors.catalog.ts';
import { DEFAULT_RENDER_LIMITS, MAX_SOURCE_CHARS } from './render.limits.ts';
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
const VALUES: unknown[] = [
  'Ann',
  '<b>&"\'`=</b>',
  '',
  0,
  -0,
  1234,
  1e21,
  true,
  false,
  null,
  ['x', 'y'],
  { toHTML: 'no' },
  { b: 'deep' },
  'ok',
];

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
async function outcome(render: () => string | Promise<string>): Promise<string> {
  try {
    return await render();
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

/** The refusal renderField answers, as a client sees it. */
async function refusal(render: Promise<string>): Promise<GatepostError> {
  const error = await render.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatepostError);
  return error as GatepostError;
}

describe('renderField', () => {
  it('fills "{{name}}" placeholders with the data, escaping HTML in html only', async () => {
    const data = { name: '<Ann & "Bo">', user: { name: 'Cy' }, n: 3 };
    expect(await renderField('html', '<p>Hi {{name}}, {{ user.name }}: {{n}}{{missing}}</p>', data, 'html')).toBe(
      '<p>Hi &lt;Ann &amp; &quot;Bo&quot;&gt;, Cy: 3</p>',
    );
    expect(await renderField('subject', 'Hi {{name}}', data, 'text')).toBe('Hi <Ann & "Bo">');
  });

  it('gives what Handlebars gives, for 5,000 generated templates and data', async () => {
    const rand = random(42);
    const cases = Array.from({ length: 5000 }, () => ({ source: template(rand), d: data(rand) })).flatMap((c) =>
      (['html', 'text'] as const).map((kind) => ({ ...c, kind })),
    );
    // All at once: the render thread's jobs queue up instead of waiting for one round trip each.
    const ours = await Promise.all(cases.map(({ source, d, kind }) => outcome(() => renderField('f', source, d, kind))));
    for (const [i, { source, d, kind }] of cases.entries()) {
      const theirs = await outcome(() => handlebars(source, d, kind));
      if (theirs.startsWith('error: ')) expect(ours[i], `${kind} ${JSON.stringify(source)}`).toMatch(/^error: /);
      else expect(ours[i], `${kind} ${JSON.stringify(source)} with ${JSON.stringify(d)}`).toBe(theirs);
    }
  }, 120_000);

  it('refuses an invalid template with an error naming the field', async () => {
    await expect(renderField('html', '<p>{{#if x}}</p>', {}, 'html')).rejects.toThrow(/html could not be rendered/);
  });

  it('renders blocks, and loops within the budget', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ n: i }));
    const out = await renderField(
      'html',
      '{{#each items}}{{#if @first}}[{{/if}}{{n}}{{#unless @last}},{{/unless}}{{/each}}]',
      { items },
      'html',
    );
    expect(out).toBe(`[${items.map((i) => i.n).join(',')}]`);
    expect(
      await renderField(
        'text',
        '{{#with user}}{{name}}{{/with}} {{#list}}<{{.}}>{{/list}}',
        { user: { name: 'Ann' }, list: ['a', 'b'] },
        'text',
      ),
    ).toBe('Ann <a><b>');
  });

  it('refuses four nested loops over 100 items, naming the iterations limit', async () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const source = '{{#each a}}{{#each ../a}}{{#each ../a}}{{#each ../a}}x{{/each}}{{/each}}{{/each}}{{/each}}';
    const error = await refusal(renderField('html', source, { a: items }, 'html'));
    expect(error.code).toBe('render_limit_exceeded');
    expect(error.status).toBe(422);
    expect(error.details).toEqual([
      { field: 'html', message: expect.stringMatching(new RegExp(`^iterations: .*${DEFAULT_RENDER_LIMITS.maxIterations}`)) },
    ]);
  });

  it('stops a loop as soon as its output passes the limit', async () => {
    const big = 'y'.repeat(200_000);
    const error = await refusal(renderField('text', '{{#each a}}{{../big}}{{/each}}', { a: [1, 2, 3, 4, 5, 6], big }, 'text'));
    expect(error.details![0]!.message).toMatch(/^output_size: /);
  });

  it('refuses output over the limit from plain placeholders, and a source over the message limit before reading it', async () => {
    const error = await refusal(
      renderField('html', '{{x}}{{x}}{{x}}', { x: 'z'.repeat(DEFAULT_RENDER_LIMITS.maxOutputBytes / 2) }, 'html'),
    );
    expect(error.details![0]!.message).toMatch(/^output_size: /);
    const source = await refusal(renderField('html', `{{x}}${' '.repeat(MAX_SOURCE_CHARS)}`, {}, 'html'));
    expect(source.code).toBe('message_too_large');
    expect(source.details).toEqual([{ field: 'html', message: `over ${MAX_SOURCE_CHARS} characters` }]);
  });

  it('has no log, lookup or inline partials: a template cannot write to the server log', async () => {
    expect(await outcome(() => renderField('text', '{{log "forged line"}}', {}, 'text'))).toMatch(/^error: .*log/);
    expect(await outcome(() => renderField('text', '{{lookup a "b"}}', { a: { b: 1 } }, 'text'))).toMatch(/^error: .*lookup/);
    expect(await outcome(() => renderField('text', '{{#*inline "p"}}{{> p}}{{/inline}}{{> p}}', {}, 'text'))).toMatch(/^error: /);
  });

  it('stops a render past its deadline and renders the next one on a fresh thread', async () => {
    // Nine million empty iterations, allowed here, take about a second and next to no memory: only
    // the deadline stops them (a render that compiles a huge template may reach the heap's limit first).
    const limits = { ...DEFAULT_RENDER_LIMITS, maxIterations: 10_000_000, timeoutMs: 100 };
    const a = Array.from({ length: 3000 }, (_, i) => i);
    const error = await refusal(renderField('html', '{{#each a}}{{#each ../a}}{{/each}}{{/each}}', { a }, 'html', limits));
    expect(error.details![0]!.message).toMatch(/^time: /);
    expect(await renderField('html', '{{#if ok}}fine{{/if}}', { ok: true }, 'html')).toBe('fine');
  });
});
