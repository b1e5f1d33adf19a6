// /v1/automations: event-driven sequences run for the contacts of an audience (docs/automations.md).
// Thin: tenancy/automation.steps.ts checks the steps whole before the catalog stores anything,
// the runs are actors read through gate/automations.ts. Another tenant's automation is, to a key,
// one that does not exist (404).
import { z } from 'zod';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { newId } from '../../lib/ids.ts';
import type { AutomationTriggers } from '../../gate/automations.ts';
import { AUTOMATION_EMAIL_EVENTS, type Automation, type Catalog } from '../../store/catalog.port.ts';
import { checkedSteps } from '../../tenancy/automation.steps.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, listOf, PageQuery, pageOf } from './schemas.ts';

const StepId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
  .meta({ description: 'Unique in the automation; `end` is kept for ending a run.' });
const WaitStep = z
  .object({
    id: StepId,
    type: z.literal('wait'),
    duration: z
      .union([z.string().max(40), z.number()])
      .meta({ description: 'ISO 8601 (`PT10M`, `P2D`, `P1DT12H`; no years or months) or seconds; 1 second to 30 days.' }),
  })
  .strict();
const SendStep = z
  .object({
    id: StepId,
    type: z.literal('send'),
    template: z.string().min(1).max(128).meta({ description: "A template's slug, rendered with the contact's data." }),
    from: z.string().min(3).max(320),
    subject: z.string().min(1).max(998).optional().meta({ description: "Replaces the template's subject." }),
  })
  .strict();
const IfStep = z
  .object({
    id: StepId,
    type: z.literal('if'),
    opened: StepId.optional().meta({ description: 'An earlier send step: did the contact open its message?' }),
    clicked: StepId.optional().meta({ description: 'An earlier send step: did the contact click a link of its message?' }),
    then: StepId.optional().meta({ description: 'The step to go on at when it did (`end` ends the run); none: the next step.' }),
    else: StepId.optional().meta({ description: 'The step to go on at when it did not; none: the next step.' }),
  })
  .strict()
  .meta({ description: 'One of opened or clicked.' });
const Step = z.discriminatedUnion('type', [WaitStep, SendStep, IfStep]);
const StoredStep = z.discriminatedUnion('type', [
  WaitStep.extend({ seconds: z.number().meta({ description: 'The duration, read.' }) }),
  SendStep,
  IfStep,
]);
const Trigger = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('contact_added') }).strict(),
    z.object({ type: z.literal('email_event'), event: z.enum(AUTOMATION_EMAIL_EVENTS) }).strict(),
    z
      .object({
        type: z.literal('custom_event'),
        name: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'letters, digits, _ . : -, at most 100'),
      })
      .strict(),
  ])
  .meta({
    description:
      'contact_added: a contact added to the audience (API or CSV import); email_event: that event of a message to a contact of the audience; custom_event: POST /v1/events with this name.',
  });

const AutomationCreate = z
  .object({
    name: z.string().min(1).max(200),
    audience_id: z.string().min(1).max(128),
    trigger: Trigger,
    steps: z.array(Step).min(1).max(50),
    sandbox: z.boolean().optional().meta({ description: 'Capture every send in the sandbox inbox, deliver none.' }),
  })
  .strict();
const AutomationUpdate = z
  .object({
    name: z.string().min(1).max(200).optional(),
    enabled: z.boolean().optional().meta({ description: 'false: starts no run, and its runs stop at their next step.' }),
  })
  .strict();
const AutomationView = z.object({
  id: z.string().meta({ description: 'aut_…' }),
  name: z.string(),
  audience_id: z.string(),
  trigger: Trigger,
  steps: z.array(StoredStep),
  enabled: z.boolean(),
  sandbox: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
const RunStatus = z.enum(['running', 'waiting', 'completed', 'stopped', 'failed']);
const RunListed = z.object({
  id: z.string().meta({ description: 'run_…' }),
  automation_id: z.string(),
  contact_id: z.string(),
  email: z.string(),
  status: RunStatus,
  reason: z.string().nullable().meta({ description: 'Why it stopped or failed.' }),
  started_at: z.string(),
  updated_at: z.string(),
});
const RunView = RunListed.extend({
  trigger: z.object({ type: z.string(), event_id: z.string(), name: z.string().optional() }),
  data: z.record(z.string(), z.unknown()).meta({ description: "The triggering event's data." }),
  timeline: z.array(
    z.object({
      at: z.string(),
      type: z.enum(['run.started', 'step.waiting', 'step.sent', 'step.condition', 'run.completed', 'run.stopped', 'run.failed']),
      step: z.string().nullable(),
      data: z.record(z.string(), z.unknown()),
    }),
  ),
});
const RunParams = z.object({ id: z.string().min(1).max(128), run: z.string().min(1).max(128) });

const TAGS = ['Automations'];

const automationView = ({ tenant_id: _t, key_id: _k, ...a }: Automation) => a;

export function automationRoutes(app: ZodApp, catalog: Catalog, triggers: AutomationTriggers): void {
  const noAutomation = (id: string) => new GatepostError('not_found', `No automation has the id "${id}".`);
  const automationOf = async (tenantId: string, id: string) => {
    const automation = await catalog.getAutomation(tenantId, id);
    if (!automation) throw noAutomation(id);
    return automation;
  };

  app.post(
    '/v1/automations',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Create an automation',
        description: 'Checked whole first: a refusal creates nothing. Enabled at once.',
        body: AutomationCreate,
        response: {
          201: answer('The automation.', AutomationView),
          400: refusal('Invalid fields.'),
          404: refusal('No such audience.'),
          422: refusal(
            'A step names no step or an unknown template, the steps go round, or a wait is out of bounds (automation_step_unknown, template_not_found, automation_cycle, automation_wait_out_of_range).',
          ),
        },
      },
    },
    async (request, reply) => {
      const { tenant, key } = senderOf(request);
      const { body } = request;
      if (!(await catalog.getAudience(tenant.id, body.audience_id))) {
        throw new GatepostError('not_found', `No audience has the id "${body.audience_id}".`, {
          details: [{ field: 'audience_id', message: 'no such audience' }],
        });
      }
      const automation = await catalog.createAutomation({
        id: newId('aut'),
        tenant_id: tenant.id,
        name: body.name,
        audience_id: body.audience_id,
        trigger: body.trigger,
        steps: await checkedSteps(catalog, tenant.id, body.steps),
        sandbox: body.sandbox ?? false,
        key_id: key.id,
      });
      return reply.code(201).send(automationView(automation));
    },
  );
  app.get(
    '/v1/automations',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'List automations',
        response: { 200: answer('Every automation of the tenant, oldest first.', listOf(AutomationView)) },
      },
    },
    async (request, reply) =>
      reply.code(200).send({ data: (await catalog.listAutomations(senderOf(request).tenant.id)).map(automationView) }),
  );
  app.get(
    '/v1/automations/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get an automation',
        params: IdParam,
        response: { 200: answer('The automation.', AutomationView), 404: refusal('No such automation.') },
      },
    },
    async (request, reply) =>
      reply.code(200).send(automationView(await automationOf(senderOf(request).tenant.id, request.params.id))),
  );
  app.patch(
    '/v1/automations/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Rename, enable or disable an automation',
        params: IdParam,
        body: AutomationUpdate,
        response: {
          200: answer('The automation.', AutomationView),
          400: refusal('Invalid fields.'),
          404: refusal('No such automation.'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const updated = await catalog.updateAutomation(senderOf(request).tenant.id, id, request.body);
      if (!updated) throw noAutomation(id);
      return reply.code(200).send(automationView(updated));
    },
  );
  app.delete(
    '/v1/automations/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Delete an automation',
        description: 'Its runs stop at their next step.',
        params: IdParam,
        response: { 204: answer('Deleted.'), 404: refusal('No such automation.') },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await catalog.deleteAutomation(senderOf(request).tenant.id, id))) throw noAutomation(id);
      return reply.code(204).send();
    },
  );
  app.get(
    '/v1/automations/:id/runs',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: "List an automation's runs",
        params: IdParam,
        querystring: PageQuery,
        response: {
          200: answer('A page of its runs, newest first.', pageOf(RunListed)),
          400: refusal('An unrecognised cursor.'),
          404: refusal('No such automation.'),
        },
      },
    },
    async (request, reply) => {
      const tenantId = senderOf(request).tenant.id;
      const automation = await automationOf(tenantId, request.params.id);
      const page = await catalog.listAutomationRuns(tenantId, automation.id, request.query);
      return reply.code(200).send({ data: page.data.map(({ tenant_id: _, ...r }) => r), next_cursor: page.next_cursor });
    },
  );
  app.get(
    '/v1/automations/:id/runs/:run',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get a run with its timeline',
        params: RunParams,
        response: { 200: answer('The run.', RunView), 404: refusal('No such automation or run.') },
      },
    },
    async (request, reply) => {
      const { id, run } = request.params;
      return reply.code(200).send(await triggers.run(senderOf(request).tenant.id, id, run));
    },
  );
}
