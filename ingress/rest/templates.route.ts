// /v1/templates: stored subject, html and text (Handlebars), by slug.
import { GatepostError, invalid, type ErrorDetail } from '../../errors/errors.catalog.ts';
import { newId } from '../../lib/ids.ts';
import { parseMailbox } from '../../mail/address.ts';
import { templateSyntaxProblem } from '../../mail/render.ts';
import type { Catalog, Template, TemplateFields } from '../../store/catalog.port.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { SlugParam, TemplateCreate, TemplateUpdate, TemplateView, listOf } from './schemas.ts';

/** Refuses templates that could never render or never be sent. */
function checkTemplate(fields: Partial<TemplateFields>): void {
  const problems: ErrorDetail[] = [];
  for (const field of ['subject', 'html', 'text'] as const) {
    const source = fields[field];
    if (typeof source !== 'string') continue;
    const problem = templateSyntaxProblem(source);
    if (problem) problems.push({ field, message: problem });
  }
  for (const field of ['from', 'reply_to', 'to'] as const) {
    const value = fields[field];
    if (typeof value !== 'string') continue;
    if (field === 'to' && value.includes('{{')) problems.push({ field, message: 'must be a literal address, not a placeholder' });
    else if (!parseMailbox(value)) problems.push({ field, message: 'not a valid email address' });
  }
  if (problems.length > 0) throw invalid(problems, 'The template is invalid.');
}

const view = ({ tenant_id: _t, ...t }: Template) => t;

export function templateRoutes(app: ZodApp, catalog: Catalog): void {
  const notFound = (slug: string) => new GatepostError('not_found', `No template has the slug "${slug}".`);
  app.post(
    '/v1/templates',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Templates'],
        summary: 'Create a template',
        body: TemplateCreate,
        response: {
          201: answer('The template.', TemplateView),
          400: refusal('Invalid fields or template syntax.'),
          409: refusal('The slug is taken.'),
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      checkTemplate(body);
      const t = await catalog.createTemplate(senderOf(request).tenant.id, newId('tpl'), {
        slug: body.slug,
        name: body.name ?? null,
        subject: body.subject,
        html: body.html,
        text: body.text ?? null,
        from: body.from ?? null,
        to: body.to ?? null,
        reply_to: body.reply_to ?? null,
      });
      return reply.code(201).send(view(t));
    },
  );
  app.get(
    '/v1/templates',
    {
      config: { access: 'read_templates' },
      schema: {
        tags: ['Templates'],
        summary: 'List templates',
        response: { 200: answer('Every template of the tenant, by slug.', listOf(TemplateView)) },
      },
    },
    async (request, reply) =>
      reply.code(200).send({ data: (await catalog.listTemplates(senderOf(request).tenant.id)).map(view) }),
  );
  app.get(
    '/v1/templates/:slug',
    {
      config: { access: 'read_templates' },
      schema: {
        tags: ['Templates'],
        summary: 'Get a template',
        params: SlugParam,
        response: {
          200: answer('The template.', TemplateView),
          404: refusal('No such slug.'),
        },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      const t = await catalog.getTemplate(senderOf(request).tenant.id, slug);
      if (!t) throw notFound(slug);
      return reply.code(200).send(view(t));
    },
  );
  app.patch(
    '/v1/templates/:slug',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Templates'],
        summary: 'Update a template',
        params: SlugParam,
        body: TemplateUpdate,
        response: {
          200: answer('The updated template.', TemplateView),
          400: refusal('Invalid fields or template syntax.'),
          404: refusal('No such slug.'),
          409: refusal('The new slug is taken.'),
        },
      },
    },
    async (request, reply) => {
      const { params, body } = request;
      checkTemplate(body);
      const t = await catalog.updateTemplate(senderOf(request).tenant.id, params.slug, body);
      if (!t) throw notFound(params.slug);
      return reply.code(200).send(view(t));
    },
  );
  app.delete(
    '/v1/templates/:slug',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Templates'],
        summary: 'Delete a template',
        params: SlugParam,
        response: { 204: answer('Deleted.'), 404: refusal('No such slug.') },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      if (!(await catalog.deleteTemplate(senderOf(request).tenant.id, slug))) throw notFound(slug);
      return reply.code(204).send();
    },
  );
}
