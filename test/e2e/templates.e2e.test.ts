// Templates by slug, and sends that render them.
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const receivedFor = (to: string) => eventually(() => suite.relay.received.find((r) => r.to.includes(to)));

describe('templates', () => {
  it('creates, gets, lists, updates and deletes a template by slug', async () => {
    const created = await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug: 'welcome', name: 'Welcome', subject: 'Welcome, {{name}}', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ slug: 'welcome', name: 'Welcome', subject: 'Welcome, {{name}}', text: 'Hi {{name}}' });
    expect(created.body.id).toMatch(/^tpl_/);

    expect((await suite.gp.request('GET', '/v1/templates/welcome', { key: suite.tenant.live })).body.html).toBe(
      '<p>Hi {{name}}</p>',
    );
    expect(
      (await suite.gp.request('GET', '/v1/templates', { key: suite.tenant.live })).body.data.map((t: { slug: string }) => t.slug),
    ).toContain('welcome');

    const dup = await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug: 'welcome', subject: 's', html: 'h' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('template_exists');

    const updated = await suite.gp.request('PATCH', '/v1/templates/welcome', {
      key: suite.tenant.live,
      body: { subject: 'Hello again, {{name}}' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.subject).toBe('Hello again, {{name}}');
    expect(updated.body.html).toBe('<p>Hi {{name}}</p>');

    expect((await suite.gp.request('DELETE', '/v1/templates/welcome', { key: suite.tenant.live })).status).toBe(204);
    expect((await suite.gp.request('GET', '/v1/templates/welcome', { key: suite.tenant.live })).status).toBe(404);
    expect((await suite.gp.request('DELETE', '/v1/templates/welcome', { key: suite.tenant.live })).status).toBe(404);
  });

  it("accepts a former provider's template id or alias as the slug", async () => {
    for (const slug of ['38912734', 'password-reset', 'order_shipped.v2', 'd-4f8a9c1e2b3d4e5f']) {
      const res = await suite.gp.request('POST', '/v1/templates', {
        key: suite.tenant.live,
        body: { slug, subject: 's', html: '<p>h</p>' },
      });
      expect(res.status, slug).toBe(201);
    }
  });

  it('refuses invalid templates, naming the fields', async () => {
    const res = await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug: 'bad slug!', subject: '{{#if}}', html: '{{#each items}}no end', to: '{{email}}', from: 'nope' },
    });
    expect(res.status).toBe(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(['slug']);
    const syntax = await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug: 'bad', subject: '{{#if x}}', html: '{{#each items}}no end', to: '{{email}}', from: 'nope' },
    });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['from', 'html', 'subject', 'to']);
  });

  it('keeps templates per tenant', async () => {
    await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: { slug: 'mine-only', subject: 's', html: '<p>h</p>' },
    });
    const other = await suite.gp.tenant();
    expect((await suite.gp.request('GET', '/v1/templates/mine-only', { key: other.live })).status).toBe(404);
  });

  it('renders a stored template with data, HTML-escaped in html only', async () => {
    await suite.gp.request('POST', '/v1/templates', {
      key: suite.tenant.live,
      body: {
        slug: 'receipt',
        subject: 'Receipt for {{customer.name}}',
        html: '<p>Thanks {{customer.name}}!</p><ul>{{#each items}}<li>{{this.title}}: {{this.price}}</li>{{/each}}</ul>',
        text: 'Thanks {{customer.name}}!',
        from: 'Shop <shop@sender.example>',
      },
    });
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: {
        to: 'buyer@example.com',
        template: 'receipt',
        data: {
          customer: { name: 'Tom & <Jerry>' },
          items: [
            { title: 'Tea', price: '3 €' },
            { title: 'Cake', price: '5 €' },
          ],
        },
      },
    });
    expect(res.status).toBe(202);
    const mail = await receivedFor('buyer@example.com');
    expect(mail.parsed.subject).toBe('Receipt for Tom & <Jerry>');
    expect(mail.parsed.html).toContain('Thanks Tom &amp; &lt;Jerry&gt;!');
    expect(mail.parsed.html).toContain('<li>Tea: 3 €</li><li>Cake: 5 €</li>');
    expect(mail.parsed.text?.trim()).toBe('Thanks Tom & <Jerry>!');
    expect(mail.parsed.from?.value[0]?.address).toBe('shop@sender.example');
  });

  it('renders merge variables in inline html the same way', async () => {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: { to: 'inline@example.com', subject: 'Code {{code}}', html: '<b>{{code}}</b> {{missing}}', data: { code: '<42>' } },
    });
    expect(res.status).toBe(202);
    const mail = await receivedFor('inline@example.com');
    expect(mail.parsed.subject).toBe('Code <42>');
    expect(mail.parsed.html).toContain('<b>&lt;42&gt;</b>');
  });

  it('refuses a send naming an unknown template (422)', async () => {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: { to: 'x@example.com', template: 'nope' },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('template_not_found');
  });
});
