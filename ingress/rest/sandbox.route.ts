// /v1/sandbox/messages: the capture inbox of sandbox keys, newest first.
import { GatepostError } from '../../errors/errors.catalog.ts';
import { textFromHtml } from '../../mail/content.ts';
import type { CapturedMessage, Catalog } from '../../store/catalog.port.ts';
import { ErrorBody, route, type AnyRoute } from './route.ts';
import { CapturedView, IdParam, PageQuery, pageOf } from './schemas.ts';

// The text part as it was sent: given, or generated from the html (done here, on reading, so
// capturing costs no conversion).
const view = ({ tenant_id: _t, ...c }: CapturedMessage) => ({ ...c, text: c.text ?? textFromHtml(c.html) });

export function sandboxRoutes(catalog: Catalog): AnyRoute[] {
  return [
    route({
      method: 'GET',
      url: '/v1/sandbox/messages',
      tag: 'Sandbox',
      summary: 'List captured sandbox messages',
      access: 'read_captures',
      query: PageQuery,
      responses: { 200: { description: 'Captured messages, rendered, newest first.', schema: pageOf(CapturedView) } },
      handler: async ({ query, sender }) => {
        const page = await catalog.listCaptures(sender.tenant.id, query);
        return { status: 200, body: { data: page.data.map(view), next_cursor: page.next_cursor } };
      },
    }),
    route({
      method: 'GET',
      url: '/v1/sandbox/messages/:id',
      tag: 'Sandbox',
      summary: 'Get one captured message',
      access: 'read_captures',
      params: IdParam,
      responses: {
        200: { description: 'The captured message.', schema: CapturedView },
        404: { description: 'Not captured.', schema: ErrorBody },
      },
      handler: async ({ params, sender }) => {
        const c = await catalog.getCapture(sender.tenant.id, params.id);
        if (!c) throw new GatepostError('not_found', `No captured message ${params.id}.`);
        return { status: 200, body: view(c) };
      },
    }),
  ];
}
