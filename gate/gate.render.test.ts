// The operator's render limits (GATEPOST_RENDER_*), lowered, hold at the HTTP level: a send over
// one is a coded 422 naming the limit and its value, and one under them renders.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RENDER_LIMITS, type RenderLimits } from '../mail/render.limits.ts';
import { createTenant } from '../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../test/harness/app.harness.ts';

// Two apps, each with one limit lowered: a render is refused over that limit and no other (a
// deadline of a minute is never what a busy machine meets first).
let counts: TestApp;
let deadline: TestApp;
const keys = new Map<TestApp, string>();

async function appWith(name: string, renderLimits: RenderLimits): Promise<TestApp> {
  const app = await buildApp(name, { actors: true, renderLimits });
  const tenant = await createTenant(app.catalog, { name: 't', default_from: 'shop@sender.example' });
  keys.set(app, (await app.keys.issue(tenant.id, 'sandbox', null)).secret);
  return app;
}

beforeAll(async () => {
  counts = await appWith('gate-render-counts', { maxOutputBytes: 100, maxIterations: 5, timeoutMs: 60_000 });
  deadline = await appWith('gate-render-deadline', { ...DEFAULT_RENDER_LIMITS, maxIterations: 10_000_000, timeoutMs: 200 });
});
afterAll(() => Promise.all([counts.close(), deadline.close()]));

const send = (html: string, data: Record<string, unknown>, app = counts) =>
  app.server.app.inject({
    method: 'POST',
    url: '/v1/emails',
    headers: { authorization: `Bearer ${keys.get(app)}` },
    payload: { to: 'r@example.com', subject: 's', html, data },
  });

const refusal = async (html: string, data: Record<string, unknown>, app = counts) => {
  const res = await send(html, data, app);
  expect(res.statusCode).toBe(422);
  const { error } = res.json<{ error: { code: string; message: string; details: { field: string; message: string }[] } }>();
  expect(error.code).toBe('render_limit_exceeded');
  return error;
};

describe('lowered render limits', () => {
  it('refuses a sixth {{#each}} iteration, naming the limit of 5', async () => {
    const error = await refusal('{{#each a}}x{{/each}}', { a: [1, 2, 3, 4, 5, 6] });
    expect(error.details).toEqual([
      { field: 'html', message: expect.stringMatching(/^iterations: runs over 5 \{\{#each\}\} iterations/) },
    ]);
    expect((await send('{{#each a}}x{{/each}}', { a: [1, 2, 3, 4, 5] })).statusCode).toBe(202);
  });

  it('refuses output over 100 bytes, counted in UTF-8: 60 characters of é are 120 bytes', async () => {
    const error = await refusal('{{x}}', { x: 'é'.repeat(60) });
    expect(error.details).toEqual([{ field: 'html', message: expect.stringMatching(/^output_size: renders to over 100 bytes/) }]);
    // The same through Handlebars on the render thread.
    const looped = await refusal('{{#if t}}{{x}}{{/if}}', { t: true, x: 'é'.repeat(60) });
    expect(looped.details[0]!.message).toMatch(/^output_size: renders to over 100 bytes/);
    expect((await send('{{x}}', { x: 'é'.repeat(50) })).statusCode).toBe(202);
  });

  it('stops a render past 200 ms', async () => {
    // Nine million empty iterations, under this app's count, take about a second and next to no
    // memory: only the deadline stops them.
    const a = Array.from({ length: 3000 }, (_, i) => i);
    const error = await refusal('{{#each a}}{{#each ../a}}{{/each}}{{/each}}', { a }, deadline);
    expect(error.details[0]!.message).toMatch(/^time: took over 200 ms/);
  });
});
