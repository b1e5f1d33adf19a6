// /v1/sandbox/messages: the capture inbox of sandbox keys, newest first.
import { GatepostError } from '../../errors/errors.catalog.ts';
import { textFromHtml } from '../../mail/content.ts';
import type { CapturedMessage, Catalog } from '../../store/catalog.port.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { CapturedView, IdParam, PageQuery, pageOf } from './schemas.ts';

// The text part as it was sent: given, or generated from the html (done here, on reading, so
// capturing costs no conversion).
// The signed source is served as the inbox's .eml, not in these answers.
const view = ({ tenant_id: _t, key_id: _k, source: _s, ...c }: CapturedMessage) => ({
  ...c,
  text: c.text ?? textFromHtml(c.html),
});

export function sandboxRoutes(app: ZodApp, catalog: Catalog): void {
  app.get(
    '/v1/sandbox/messages',
    {
      config: { access: 'read_captures' },
      schema: {
        tags: ['Sandbox'],
        summary: 'List captured sandbox messages',
        querystring: PageQuery,
        response: { 200: answer('Captured messages, rendered, newest first.', pageOf(CapturedView)) },
      },
    },
    async (request, reply) => {
      const page = await catalog.listCaptures(senderOf(request).tenant.id, request.query);
      return reply.code(200).send({ data: page.data.map(view), next_cursor: page.next_cursor });
    },
  );
  app.get(
    '/v1/sandbox/messages/:id',
    {
      config: { access: 'read_captures' },
      schema: {
        tags: ['Sandbox'],
        summary: 'Get one captured message',
        params: IdParam,
        response: {
          200: answer('The captured message.', CapturedView),
          404: refusal('Not captured.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const c = await catalog.getCapture(senderOf(request).tenant.id, params.id);
      if (!c) throw new GatepostError('not_found', `No captured message ${params.id}.`);
      return reply.code(200).send(view(c));
    },
  );
}
