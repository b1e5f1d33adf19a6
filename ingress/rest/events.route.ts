// POST /v1/events: a custom event a client posts, which starts the automations it names
// (docs/automations.md#custom-events); served by every API process.
// GET /v1/events: the tenant's lifecycle events as they happen, read with a cursor and held open
// until one comes (long polling), so a client Gatepost cannot reach still gets them: the CLI's
// `gatepost listen` forwards them to a development server. A sandbox key reads the events of
// sandbox messages only. Served where events are fanned out (events/event.feed.ts).
import { z } from 'zod';
import type { EventFeed } from '../../events/event.feed.ts';
import type { AutomationTriggers } from '../../gate/automations.ts';
import { contactEmail } from './audiences.route.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { EventEnvelope } from './schemas.ts';

/** The longest a request is held, under every HTTP timeout between a client and Gatepost. */
export const MAX_WAIT_SECONDS = 25;

const EventsQuery = z.object({
  after: z
    .string()
    .regex(/^[0-9a-f]{8}\.\d{1,15}$/, 'a cursor from an earlier answer')
    .optional()
    .meta({ description: 'The cursor of an earlier answer: the events after it. None: only events from now on.' }),
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .default(0)
    .meta({
      description: `Seconds to hold the request open while there is no event (long polling); at most ${MAX_WAIT_SECONDS}.`,
    }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const FeedPage = z.object({
  data: z
    .array(EventEnvelope)
    .meta({ description: 'Events after the cursor, oldest first (the same envelope webhooks deliver).' }),
  cursor: z.string().meta({ description: 'Give it as `after` for the events that follow.' }),
});

export function eventRoutes(app: ZodApp, feed: EventFeed): void {
  // A draining server ends the requests it holds at once, with what they have.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  app.get(
    '/v1/events',
    {
      config: { access: 'read_events' },
      schema: {
        tags: ['Events'],
        summary: "The tenant's lifecycle events, with a cursor; held open until one comes",
        description:
          'Kept in memory by the process that fans events out to webhooks, while someone reads them: from the first read, until two ' +
          'minutes after the last; the last 1,000 events of a tenant. A cursor from before a restart reads from the first event kept.',
        querystring: EventsQuery,
        response: {
          200: answer('The events after the cursor (none when the wait ended first), and the next cursor.', FeedPage),
          400: refusal('Not a cursor, or a wait over the limit.'),
        },
      },
    },
    async (request, reply) => {
      const { key, tenant } = senderOf(request);
      const gone = new AbortController();
      reply.raw.on('close', () => gone.abort());
      const page = await feed.read(tenant.id, {
        after: request.query.after,
        limit: request.query.limit,
        waitMs: request.query.wait * 1000,
        keep: key.kind === 'sandbox' ? (e) => e.data.sandbox === true : () => true,
        signal: AbortSignal.any([gone.signal, closing.signal]),
      });
      return reply.code(200).send(page);
    },
  );
}

const CustomEventBody = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'letters, digits, _ . : -, at most 100'),
    email: z.string().min(3).max(254).meta({ description: 'The contact it is about.' }),
    data: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "Merge variables for the runs' sends, over the contact's own data." }),
    idempotency_key: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .meta({ description: 'The same key again is the same event: it starts nothing twice.' }),
  })
  .strict();
const CustomEventAnswer = z.object({
  id: z.string().meta({ description: 'evt_…' }),
  runs: z.array(z.string()).meta({ description: 'The runs it started (run_…); none for a repeat.' }),
});

export function customEventRoutes(app: ZodApp, triggers: AutomationTriggers): void {
  app.post(
    '/v1/events',
    {
      config: { access: 'send' },
      schema: {
        tags: ['Events'],
        summary: 'Post a custom event, starting the automations it triggers',
        description:
          'Starts a run of each enabled automation triggered by this name whose audience has the email as a contact. From a sandbox key, only automations that capture (sandbox) are started.',
        body: CustomEventBody,
        response: {
          202: answer('The runs it started.', CustomEventAnswer),
          400: refusal('Invalid fields.'),
          404: refusal('The email is a contact of the audience of no automation this name triggers (contact_not_found).'),
        },
      },
    },
    async (request, reply) => {
      const { tenant, key } = senderOf(request);
      const { body } = request;
      const started = await triggers.customEvent(tenant.id, {
        name: body.name,
        email: contactEmail(body.email),
        data: body.data ?? {},
        idempotency_key: body.idempotency_key,
        sandboxOnly: key.sandbox,
      });
      return reply.code(202).send(started);
    },
  );
}
