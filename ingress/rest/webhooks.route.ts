// /v1/webhooks: endpoints that lifecycle events are pushed to, signed (docs/webhooks.md). The
// secret is answered once, at creation and at each rotation. Every URL passes the SSRF guard
// here, and again before every delivery attempt.
import { z } from 'zod';
import type { Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { newId } from '../../lib/ids.ts';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type WebhookEnvelope } from '../../events/email.event.ts';
import { DELIVERY_LOG_SIZE, webhookDeliveries } from '../../gate/webhooks.ts';
import type { Catalog, WebhookEndpoint } from '../../store/catalog.port.ts';
import type { SsrfGuard } from '../../webhooks/ssrf.guard.ts';
import { newSecret, signingSecrets } from '../../webhooks/webhook.signing.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { EventEnvelope, listOf, WebhookUrl } from './schemas.ts';

/** After a rotation the previous secret signs too, this long. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

const Url = WebhookUrl;
const Events = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .meta({ description: 'Event types to receive (spec part 6).' });

const WebhookCreate = z.object({ url: Url, events: Events }).strict();
const WebhookUpdate = z
  .object({
    url: Url.optional(),
    events: Events.optional(),
    enabled: z.boolean().optional().meta({ description: 'false disables by hand; true enables again (and clears the reason).' }),
  })
  .strict();

const WebhookView = z.object({
  id: z.string().meta({ description: 'whk_…' }),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  disabled_reason: z
    .enum(['manual', 'gone', 'failing'])
    .nullable()
    .meta({ description: 'manual (PATCH), gone (it answered 410) or failing (no success for days).' }),
  disabled_at: z.string().nullable(),
  previous_secret_expires_at: z
    .string()
    .nullable()
    .meta({ description: 'While a rotation overlaps: until when deliveries carry a signature with the previous secret too.' }),
  created_at: z.string(),
  updated_at: z.string(),
});

const WebhookCreated = WebhookView.extend({
  secret: z.string().meta({ description: 'The signing secret, whsec_…: shown this once.' }),
});

const Rotated = z.object({
  id: z.string(),
  secret: z.string().meta({ description: 'The new signing secret, whsec_…: shown this once.' }),
  previous_secret_expires_at: z.string().meta({ description: 'Until then, deliveries are signed with both secrets.' }),
});

const DeliveryView = z.object({
  event_id: z.string(),
  event_type: z.string(),
  attempt: z.number().int(),
  at: z.string(),
  duration_ms: z.number().int(),
  status_code: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null when there was no answer." }),
  error: z.string().nullable().meta({ description: 'Why it was not a success (timeout, refused address, HTTP status…).' }),
  result: z.enum(['delivered', 'retrying', 'failed']),
  next_attempt_at: z.string().nullable(),
});

const WebhookParams = z.object({ id: z.string().min(1).max(128) });
const DeliveryParams = z.object({ id: z.string().min(1).max(128), evt: z.string().min(1).max(128) });
const DeliveriesQuery = z.object({ limit: z.coerce.number().int().min(1).max(DELIVERY_LOG_SIZE).default(DELIVERY_LOG_SIZE) });

const view = (w: WebhookEndpoint) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  enabled: w.enabled,
  disabled_reason: w.disabled_reason,
  disabled_at: w.disabled_at,
  // Shown while the previous secret still signs: the rule the lanes sign by.
  previous_secret_expires_at: signingSecrets(w).length > 1 ? w.previous_secret_expires_at : null,
  created_at: w.created_at,
  updated_at: w.updated_at,
});

export function webhookRoutes(app: ZodApp, deps: { invoker: Invoker; catalog: Catalog; guard: SsrfGuard }): void {
  const { catalog, guard } = deps;
  const endpoints = webhookDeliveries(deps.invoker);
  const notFound = (id: string) => new GatepostError('not_found', `No webhook endpoint ${id} exists for this tenant.`);
  const load = async (tenantId: string, id: string) => {
    const w = /^whk_[0-9a-z]{26}$/.test(id) ? await catalog.getWebhook(tenantId, id) : null;
    if (!w) throw notFound(id);
    return w;
  };
  app.post(
    '/v1/webhooks',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Create a webhook endpoint',
        body: WebhookCreate,
        response: {
          201: answer('The endpoint, with its secret (shown this once).', WebhookCreated),
          400: refusal('Invalid fields.'),
          422: refusal('The URL is refused by the SSRF guard (webhook_url_refused).'),
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const sender = senderOf(request);
      await guard.check(body.url);
      const secret = newSecret();
      const w = await catalog.createWebhook({
        id: newId('whk'),
        tenant_id: sender.tenant.id,
        url: body.url,
        events: [...new Set(body.events)],
        secret,
      });
      return reply.code(201).send({ ...view(w), secret });
    },
  );
  app.get(
    '/v1/webhooks',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'List webhook endpoints',
        response: { 200: answer('Every endpoint of the tenant, oldest first.', listOf(WebhookView)) },
      },
    },
    async (request, reply) => {
      const sender = senderOf(request);
      return reply.code(200).send({ data: (await catalog.listWebhooks(sender.tenant.id)).map(view) });
    },
  );
  app.get(
    '/v1/webhooks/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Get a webhook endpoint',
        params: WebhookParams,
        response: {
          200: answer('The endpoint (never its secret).', WebhookView),
          404: refusal('No such endpoint.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const sender = senderOf(request);
      return reply.code(200).send(view(await load(sender.tenant.id, params.id)));
    },
  );
  app.patch(
    '/v1/webhooks/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Update a webhook endpoint (url, events, enabled)',
        params: WebhookParams,
        body: WebhookUpdate,
        response: {
          200: answer('The updated endpoint.', WebhookView),
          400: refusal('Invalid fields.'),
          404: refusal('No such endpoint.'),
          422: refusal('The URL is refused by the SSRF guard (webhook_url_refused).'),
        },
      },
    },
    async (request, reply) => {
      const { params, body } = request;
      const sender = senderOf(request);
      await load(sender.tenant.id, params.id);
      if (body.url !== undefined) await guard.check(body.url);
      const w = await catalog.updateWebhook(sender.tenant.id, params.id, {
        ...body,
        ...(body.events ? { events: [...new Set(body.events)] } : {}),
      });
      if (!w) throw notFound(params.id);
      // Enabled (again): its failures so far no longer count towards disabling it.
      if (body.enabled === true) await endpoints.reset(w.id);
      return reply.code(200).send(view(w));
    },
  );
  app.delete(
    '/v1/webhooks/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Delete a webhook endpoint',
        params: WebhookParams,
        response: {
          204: answer('Deleted: nothing more is delivered to it.'),
          404: refusal('No such endpoint.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const sender = senderOf(request);
      if (!(await catalog.deleteWebhook(sender.tenant.id, params.id))) throw notFound(params.id);
      await endpoints.forget(params.id);
      return reply.code(204).send();
    },
  );
  app.post(
    '/v1/webhooks/:id/rotate',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Rotate the signing secret',
        params: WebhookParams,
        response: {
          200: answer('The new secret (shown this once); the previous one keeps signing for 24 hours.', Rotated),
          404: refusal('No such endpoint.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const sender = senderOf(request);
      const expires = new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString();
      const w = await catalog.rotateWebhookSecret(sender.tenant.id, params.id, newSecret(), expires);
      if (!w) throw notFound(params.id);
      return reply.code(200).send({ id: w.id, secret: w.secret, previous_secret_expires_at: expires });
    },
  );
  app.post(
    '/v1/webhooks/:id/test',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: `Send a test event (type ${TEST_EVENT_TYPE})`,
        params: WebhookParams,
        response: {
          202: answer(
            'The test event, queued: delivered, signed and retried like any other; see the deliveries.',
            z.object({ event: EventEnvelope }),
          ),
          404: refusal('No such endpoint.'),
          409: refusal('The endpoint is disabled (webhook_disabled).'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const sender = senderOf(request);
      const w = await load(sender.tenant.id, params.id);
      if (!w.enabled) throw new GatepostError('webhook_disabled', `The endpoint ${w.id} is disabled (${w.disabled_reason}).`);
      const event: WebhookEnvelope = {
        id: newId('evt'),
        type: TEST_EVENT_TYPE,
        created_at: new Date().toISOString(),
        data: { endpoint_id: w.id, message: 'A test event from Gatepost, signed like every delivery.' },
      };
      await endpoints.enqueue(w.id, sender.tenant.id, event);
      return reply.code(202).send({ event });
    },
  );
  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Recent delivery attempts',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: {
          200: answer(`The last attempts (up to ${DELIVERY_LOG_SIZE}), newest first.`, listOf(DeliveryView)),
          404: refusal('No such endpoint.'),
        },
      },
    },
    async (request, reply) => {
      const { params, query } = request;
      const sender = senderOf(request);
      await load(sender.tenant.id, params.id);
      return reply.code(200).send({ data: await endpoints.deliveries(params.id, query.limit) });
    },
  );
  app.post(
    '/v1/webhooks/:id/deliveries/:evt/retry',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Webhooks'],
        summary: 'Redeliver a failed event by hand',
        params: DeliveryParams,
        response: {
          202: answer(
            'One more attempt is queued, now, with the same evt_ id.',
            z.object({ event_id: z.string(), status: z.literal('pending') }),
          ),
          404: refusal('No such endpoint, or no failed delivery of that event is kept (30 days).'),
          409: refusal('The event has not failed (webhook_delivery_not_failed).'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const sender = senderOf(request);
      await load(sender.tenant.id, params.id);
      if (!/^evt_[0-9a-z]{26}$/.test(params.evt)) {
        throw new GatepostError('not_found', `No failed delivery of ${params.evt} is kept for this endpoint.`);
      }
      await endpoints.redeliver(params.id, params.evt);
      return reply.code(202).send({ event_id: params.evt, status: 'pending' });
    },
  );
}
