// Issue 20, item 3: a small request with costly template work froze the whole server (four nested
// {{#each}} over 100 items: 11.7 s of event loop). Rendering now has a budget and runs off the
// event loop: the server keeps answering while such a request is refused.
import { describe, expect, it } from 'vitest';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const send = (body: Record<string, unknown>) =>
  suite.gp.request('POST', '/v1/emails', {
    key: suite.tenant.sandbox,
    body: { from: 'a@sender.example', to: 'b@example.com', subject: 'loops', ...body },
  });

describe('render budget', () => {
  it('refuses four nested loops over 100 items with a coded 422 naming the limit', async () => {
    const res = await send({
      html: '{{#each a}}{{#each ../a}}{{#each ../a}}{{#each ../a}}{{this}}{{/each}}{{/each}}{{/each}}{{/each}}',
      data: { a: Array.from({ length: 100 }, (_, i) => i) },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('render_limit_exceeded');
    expect(res.body.error.details).toEqual([{ field: 'html', message: expect.stringMatching(/^iterations: /) }]);
  });

  it('answers /healthz while a render runs to its budget, then refuses that render', async () => {
    let settled = false;
    const slow = send({ html: `{{#if t}}${'{{a}}'.repeat(200_000)}{{/if}}`, data: { t: true, a: 'b'.repeat(2000) } }).finally(
      () => (settled = true),
    );
    // Blocking the event loop, the render would hold /healthz until it had finished.
    const health = await suite.gp.request('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(settled).toBe(false);
    const refused = await slow;
    expect(refused.status).toBe(422);
    // Its deadline or its memory, whichever this machine reaches first: both are the budget.
    expect(refused.body.error.details).toEqual([{ field: 'html', message: expect.stringMatching(/^(time|memory): /) }]);
  });
});
