// /v1/broadcasts: draft a broadcast to an audience, send it now or at a time, follow it, cancel it
// (docs/broadcasts.md). Thin: gate/broadcasts.ts checks and keeps them, and the fan-out is the
// BroadcastActor's. Another tenant's broadcast or audience is, to a key, one that does not exist (404).
import { z } from 'zod';
import { invalid, type ErrorDetail } from '../../errors/errors.catalog.ts';
import type { Broadcast } from '../../store/catalog.port.ts';
import { parseMailbox } from '../../mail/address.ts';
import type { Broadcasts } from '../../gate/broadcasts.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { Address, IdParam, PageQuery, pageOf, Slug } from './schemas.ts';

const Status = z.enum(['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled']);

const BroadcastCreate = z
  .object({
    name: z.string().min(1).max(200),
    audience_id: z.string().min(1).max(128),
    from: Address.meta({ description: 'The sender, a mailbox: "News <news@shop.example>".' }),
    subject: z
      .string()
      .min(1)
      .max(998)
      .optional()
      .meta({ description: "Required unless a template gives it; may hold {{placeholders}}, the contact's among them." }),
    html: z.string().min(1).optional().meta({ description: 'The body, or a template: one of the two.' }),
    text: z.string().min(1).optional().meta({ description: 'Generated from the html when absent.' }),
    template: Slug.optional().meta({ description: 'A template slug, read when the broadcast is sent.' }),
    data: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "Merge variables of every message; each contact's data, email and name win over them." }),
    sandbox: z
      .boolean()
      .optional()
      .meta({ description: 'Capture every message in the sandbox inbox instead of delivering it (the whole pipeline runs).' }),
  })
  .strict();
type BroadcastCreate = z.infer<typeof BroadcastCreate>;

const SendBody = z
  .object({
    send_at: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Send at this time (in the future, at most 30 days ahead); now when absent.' }),
  })
  .strict();

const Counts = z.object({
  sent: z.number().int().meta({ description: 'Messages delivered (captured, in the sandbox).' }),
  bounced: z.number().int(),
  opened: z.number().int().meta({ description: 'Messages opened at least once.' }),
  clicked: z.number().int().meta({ description: 'Messages with a link clicked at least once.' }),
  unsubscribed: z.number().int(),
  complained: z.number().int(),
});

const BroadcastFields = {
  id: z.string().meta({ description: 'bro_…' }),
  name: z.string(),
  audience_id: z.string(),
  from: z.string(),
  subject: z.string().nullable(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  template: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  sandbox: z.boolean(),
  status: Status,
  send_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
};
const BroadcastListed = z.object(BroadcastFields);
const BroadcastView = z.object({
  ...BroadcastFields,
  paused: z
    .object({ reason: z.string(), until: z.string() })
    .nullable()
    .meta({ description: 'While paused: why (an open reputation breaker, the daily quota), and when it tries again.' }),
  progress: z
    .object({
      admitted: z.number().int().meta({ description: 'Messages the gate admitted, one per contact.' }),
      refused: z.object({
        suppressed: z
          .number()
          .int()
          .meta({ description: "Refused by the gate: the address is on the tenant's suppression list." }),
        unsubscribed: z.number().int().meta({ description: 'Skipped: the contact is unsubscribed.' }),
        other: z.number().int().meta({ description: 'Refused by the gate for another reason (a render over its limits).' }),
      }),
      started_at: z.string().nullable(),
      finished_at: z.string().nullable(),
    })
    .nullable()
    .meta({ description: 'The fan-out to the audience; null for a draft.' }),
  results: Counts.nullable().meta({
    description: "The messages' lifecycle events, each message counted once per kind; null for a draft.",
  }),
});

const TAGS = ['Broadcasts'];

const listed = ({ tenant_id: _, paused: _p, progress: _f, ...b }: Broadcast) => b;

/** What the schema cannot say alone: html or a template, and a subject unless the template has one; a from that is a mailbox. */
function checkDraft(body: BroadcastCreate): void {
  const problems: ErrorDetail[] = [];
  if ((body.html === undefined) === (body.template === undefined)) {
    problems.push({ field: 'html', message: 'give html or a template, one of the two' });
  }
  if (body.template === undefined && body.subject === undefined)
    problems.push({ field: 'subject', message: 'is required without a template' });
  if (!parseMailbox(body.from)) problems.push({ field: 'from', message: 'not a valid email address' });
  if (problems.length > 0) throw invalid(problems);
}

export function broadcastRoutes(app: ZodApp, broadcasts: Broadcasts): void {
  const notFound = refusal('No such broadcast.');
  app.post(
    '/v1/broadcasts',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Draft a broadcast to an audience',
        body: BroadcastCreate,
        response: {
          201: answer('The draft.', BroadcastView),
          400: refusal(
            'Invalid fields: html and a template both or neither, no subject without a template, a from that is no mailbox.',
          ),
          404: refusal('No such audience (another tenant’s is none).'),
          422: refusal('No template has that slug (template_not_found).'),
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      checkDraft(body);
      const draft = await broadcasts.create(senderOf(request).tenant.id, {
        name: body.name,
        audience_id: body.audience_id,
        from: body.from,
        subject: body.subject ?? null,
        html: body.html ?? null,
        text: body.text ?? null,
        template: body.template ?? null,
        data: body.data ?? {},
        sandbox: body.sandbox ?? false,
      });
      return reply.code(201).send(draft);
    },
  );
  app.get(
    '/v1/broadcasts',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'List broadcasts',
        querystring: PageQuery,
        response: {
          200: answer('A page of the tenant’s broadcasts, newest first.', pageOf(BroadcastListed)),
          400: refusal('An unrecognised cursor.'),
        },
      },
    },
    async (request, reply) => {
      const page = await broadcasts.list(senderOf(request).tenant.id, request.query);
      return reply.code(200).send({ data: page.data.map(listed), next_cursor: page.next_cursor });
    },
  );
  app.get(
    '/v1/broadcasts/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get a broadcast, its progress and its results',
        params: IdParam,
        response: { 200: answer('The broadcast.', BroadcastView), 404: notFound },
      },
    },
    async (request, reply) => reply.code(200).send(await broadcasts.get(senderOf(request).tenant.id, request.params.id)),
  );
  app.delete(
    '/v1/broadcasts/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Delete a draft',
        params: IdParam,
        response: {
          204: answer('Deleted.'),
          404: notFound,
          409: refusal('The broadcast is no longer a draft (broadcast_not_draft): cancel it instead.'),
        },
      },
    },
    async (request, reply) => {
      await broadcasts.remove(senderOf(request).tenant.id, request.params.id);
      return reply.code(204).send();
    },
  );
  app.post(
    '/v1/broadcasts/:id/send',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Send a draft now, or schedule it',
        description:
          'Each contact of the audience gets a message of its own through the admission gate, on the broadcast stream, with tracking and List-Unsubscribe; an unsubscribed contact is skipped, a suppressed address refused. A refused send leaves the draft as it was.',
        params: IdParam,
        body: SendBody.nullish(),
        response: {
          200: answer('The broadcast, sending or scheduled.', BroadcastView),
          404: refusal('No such broadcast, or its audience is gone.'),
          409: refusal('The broadcast was sent (or scheduled, or cancelled) already (broadcast_already_sent).'),
          422: refusal(
            'The audience has no contacts (audience_empty), send_at is past or over 30 days ahead (send_at_out_of_range), the template is gone (template_not_found), or the from domain is not verified (sender_not_verified).',
          ),
        },
      },
    },
    async (request, reply) => {
      const view = await broadcasts.send(senderOf(request), request.params.id, request.body?.send_at ?? null);
      return reply.code(200).send(view);
    },
  );
  app.post(
    '/v1/broadcasts/:id/cancel',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Cancel a scheduled, sending or paused broadcast',
        description: 'Nobody not yet admitted is sent to; messages admitted already go on.',
        params: IdParam,
        response: {
          200: answer('The broadcast, cancelled.', BroadcastView),
          404: notFound,
          409: refusal('A draft (delete it instead), or a broadcast already sent or cancelled (broadcast_not_cancellable).'),
        },
      },
    },
    async (request, reply) => reply.code(200).send(await broadcasts.cancel(senderOf(request).tenant.id, request.params.id)),
  );
}
