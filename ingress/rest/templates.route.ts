// /v1/templates: stored subject, html and text (Handlebars), by slug.
import { GatepostError, invalid, type ErrorDetail } from '../../errors/errors.catalog.ts';
import { newId } from '../../lib/ids.ts';
import { parseMailbox } from '../../mail/address.ts';
import { templateSyntaxProblem } from '../../mail/render.ts';
import type { Catalog, Template, TemplateFields } from '../../store/catalog.port.ts';
import { ErrorBody, route, type AnyRoute } from './route.ts';
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

export function templateRoutes(catalog: Catalog): AnyRoute[] {
  const notFound = (slug: string) => new GatepostError('not_found', `No template has the slug "${slug}".`);
  return [
    route({
      method: 'POST',
      url: '/v1/templates',
      tag: 'Templates',
      summary: 'Create a template',
      access: 'manage',
      body: TemplateCreate,
      responses: {
        201: { description: 'The template.', schema: TemplateView },
        400: { description: 'Invalid fields or template syntax.', schema: ErrorBody },
        409: { description: 'The slug is taken.', schema: ErrorBody },
      },
      handler: async ({ body, sender }) => {
        checkTemplate(body);
        const t = await catalog.createTemplate(sender.tenant.id, newId('tpl'), {
          slug: body.slug,
          name: body.name ?? null,
          subject: body.subject,
          html: body.html,
          text: body.text ?? null,
          from: body.from ?? null,
          to: body.to ?? null,
          reply_to: body.reply_to ?? null,
        });
        return { status: 201, body: view(t) };
      },
    }),
    route({
      method: 'GET',
      url: '/v1/templates',
      tag: 'Templates',
      summary: 'List templates',
      access: 'read_templates',
      responses: { 200: { description: 'Every template of the tenant, by slug.', schema: listOf(TemplateView) } },
      handler: async ({ sender }) => ({ status: 200, body: { data: (await catalog.listTemplates(sender.tenant.id)).map(view) } }),
    }),
    route({
      method: 'GET',
      url: '/v1/templates/:slug',
      tag: 'Templates',
      summary: 'Get a template',
      access: 'read_templates',
      params: SlugParam,
      responses: {
        200: { description: 'The template.', schema: TemplateView },
        404: { description: 'No such slug.', schema: ErrorBody },
      },
      handler: async ({ params, sender }) => {
        const t = await catalog.getTemplate(sender.tenant.id, params.slug);
        if (!t) throw notFound(params.slug);
        return { status: 200, body: view(t) };
      },
    }),
    route({
      method: 'PATCH',
      url: '/v1/templates/:slug',
      tag: 'Templates',
      summary: 'Update a template',
      access: 'manage',
      params: SlugParam,
      body: TemplateUpdate,
      responses: {
        200: { description: 'The updated template.', schema: TemplateView },
        400: { description: 'Invalid fields or template syntax.', schema: ErrorBody },
        404: { description: 'No such slug.', schema: ErrorBody },
        409: { description: 'The new slug is taken.', schema: ErrorBody },
      },
      handler: async ({ params, body, sender }) => {
        checkTemplate(body);
        const t = await catalog.updateTemplate(sender.tenant.id, params.slug, body);
        if (!t) throw notFound(params.slug);
        return { status: 200, body: view(t) };
      },
    }),
    route({
      method: 'DELETE',
      url: '/v1/templates/:slug',
      tag: 'Templates',
      summary: 'Delete a template',
      access: 'manage',
      params: SlugParam,
      responses: { 204: { description: 'Deleted.' }, 404: { description: 'No such slug.', schema: ErrorBody } },
      handler: async ({ params, sender }) => {
        if (!(await catalog.deleteTemplate(sender.tenant.id, params.slug))) throw notFound(params.slug);
        return { status: 204 };
      },
    }),
  ];
}
