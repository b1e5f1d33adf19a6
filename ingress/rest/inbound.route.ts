// /v1/inbound: inbound routes (docs/inbound.md) and the mail the inbound MX received for the
// tenant: each message as its email.inbound payload, its raw bytes and its attachments. Thin:
// tenancy/inbound.routes.ts checks routes; the catalog keeps messages, so any process serving
// the API hands them out, whichever received them.
import { z } from 'zod';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Catalog, InboundMessage } from '../../store/catalog.port.ts';
import type { InboundRoutes } from '../../tenancy/inbound.routes.ts';
import { inboundLinks } from '../inbound/inbound.payload.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, listOf, PageQuery, pageOf } from './schemas.ts';

const Match = z.string().min(3).max(320).meta({
  description:
    'user@domain, *@domain, or a local part with * wildcards (support+*@domain); the domain must be an inbound domain of the tenant.',
});
const Action = z.enum(['webhook', 'store']).meta({
  description:
    'webhook (default): post email.inbound to the endpoint named, or to every endpoint subscribed to it; store: keep the message only.',
});
const EndpointId = z.string().max(128).nullable().meta({
  description: 'whk_…: the one endpoint to post to; null or absent: every enabled endpoint subscribed to email.inbound.',
});

const RouteCreate = z.object({ match: Match, action: Action.optional(), endpoint_id: EndpointId.optional() }).strict();
const RoutePatch = z
  .object({ match: Match.optional(), action: Action.optional(), endpoint_id: EndpointId.optional() })
  .strict()
  .meta({ description: 'The fields to change.' });

const RouteView = z.object({
  id: z.string().meta({ description: 'rte_…' }),
  match: z.string().meta({ description: 'As stored: lower case, the domain as IDNA A-labels.' }),
  domain: z.string(),
  action: z.enum(['webhook', 'store']),
  endpoint_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const MessageView = z
  .object({
    id: z.string().meta({ description: 'inm_…' }),
    route_id: z.string().meta({ description: 'The route that matched, rte_… (it may have been deleted since).' }),
    mail_from: z.string().meta({ description: "The envelope sender; '' for the null sender." }),
    rcpt_to: z.array(z.string()),
    remote_address: z.string(),
    received_at: z.string(),
    size: z.number().int(),
  })
  .catchall(z.unknown())
  .meta({ description: 'The envelope, and every field of the email.inbound payload (docs/inbound.md).' });

// `n` is a string of digits in the document (a path segment), read as its number.
const AttachmentParam = z.object({
  id: z.string().min(1).max(128),
  n: z
    .string()
    .regex(/^\d{1,5}$/)
    .meta({ description: 'The attachment’s place in the payload’s attachments, from 0.' }),
});

const TAGS = ['Inbound'];

export function inboundRoutes(app: ZodApp, deps: { routes: InboundRoutes; catalog: Catalog; publicUrl: () => string }): void {
  const { routes, catalog } = deps;
  const view = ({ tenant_id: _, payload, ...m }: InboundMessage) => ({
    ...m,
    ...payload,
    ...inboundLinks(deps.publicUrl(), m.id, payload),
  });

  app.post(
    '/v1/inbound/routes',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Create an inbound route',
        body: RouteCreate,
        response: {
          201: answer('The route.', RouteView),
          400: refusal('Not a match, or an unknown endpoint.'),
          409: refusal('The tenant has a route with this match already.'),
          422: refusal('The domain is not a verified domain of the tenant with its inbound MX record found.'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await routes.create(senderOf(request).tenant.id, request.body)),
  );
  app.get(
    '/v1/inbound/routes',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'List inbound routes',
        response: { 200: answer('Every route of the tenant, oldest first.', listOf(RouteView)) },
      },
    },
    async (request, reply) => reply.code(200).send({ data: await routes.list(senderOf(request).tenant.id) }),
  );
  app.get(
    '/v1/inbound/routes/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get an inbound route',
        params: IdParam,
        response: { 200: answer('The route.', RouteView), 404: refusal('No such route.') },
      },
    },
    async (request, reply) => reply.code(200).send(await routes.get(senderOf(request).tenant.id, request.params.id)),
  );
  app.patch(
    '/v1/inbound/routes/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Change an inbound route',
        params: IdParam,
        body: RoutePatch,
        response: {
          200: answer('The route as changed.', RouteView),
          400: refusal('Not a match, or an unknown endpoint.'),
          404: refusal('No such route.'),
          409: refusal('The tenant has a route with this match already.'),
          422: refusal('The domain is not a verified domain of the tenant with its inbound MX record found.'),
        },
      },
    },
    async (request, reply) =>
      reply.code(200).send(await routes.update(senderOf(request).tenant.id, request.params.id, request.body)),
  );
  app.delete(
    '/v1/inbound/routes/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Delete an inbound route',
        params: IdParam,
        response: {
          204: answer('Deleted: mail to its addresses is refused from now on, unless another route matches.'),
          404: refusal('No such route.'),
        },
      },
    },
    async (request, reply) => {
      await routes.delete(senderOf(request).tenant.id, request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/v1/inbound/messages',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'List received messages',
        querystring: PageQuery,
        response: { 200: answer('The tenant’s received messages, newest first.', pageOf(MessageView)) },
      },
    },
    async (request, reply) => {
      const page = await catalog.listInboundMessages(senderOf(request).tenant.id, request.query);
      return reply.code(200).send({ data: page.data.map(view), next_cursor: page.next_cursor });
    },
  );
  app.get(
    '/v1/inbound/messages/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get a received message',
        params: IdParam,
        response: {
          200: answer('The message: its envelope and its email.inbound payload.', MessageView),
          404: refusal('No such message.'),
        },
      },
    },
    async (request, reply) => {
      const m = await catalog.getInboundMessage(senderOf(request).tenant.id, request.params.id);
      if (!m) throw notFound(request.params.id);
      return reply.code(200).send(view(m));
    },
  );
  app.get(
    '/v1/inbound/messages/:id/raw',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get a received message as received',
        params: IdParam,
        response: {
          200: answer('The message, byte for byte as the inbound MX received it.', z.string(), 'message/rfc822'),
          404: refusal('No such message.'),
        },
      },
    },
    async (request, reply) => {
      const raw = await catalog.inboundRaw(senderOf(request).tenant.id, request.params.id);
      if (!raw) throw notFound(request.params.id);
      return reply.code(200).type('message/rfc822').send(raw);
    },
  );
  app.get(
    '/v1/inbound/messages/:id/attachments/:n',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get an attachment of a received message',
        params: AttachmentParam,
        response: {
          200: answer('The attachment’s bytes, with its content type.', z.string(), 'application/octet-stream'),
          404: refusal('No such message, or no attachment with that number.'),
        },
      },
    },
    async (request, reply) => {
      const a = await catalog.inboundAttachment(senderOf(request).tenant.id, request.params.id, Number(request.params.n));
      if (!a) throw new GatepostError('not_found', `The message "${request.params.id}" has no attachment ${request.params.n}.`);
      const name = (a.filename ?? `attachment-${request.params.n}`).replace(/[^\x20-\x7e]|["\\]/g, '_');
      // Served as a download, never rendered here: an attachment's html is someone else's page.
      return reply
        .code(200)
        .type(a.content_type)
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('x-content-type-options', 'nosniff')
        .send(a.content);
    },
  );
}

const notFound = (id: string) => new GatepostError('not_found', `No received message has the id "${id}".`);
