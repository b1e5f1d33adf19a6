// The fair queue in front of delivery (docs/deliverability.md#the-fair-queue): the tenant reads
// its own rows, the operator every tenant's. Embedded, the process's own queue; on Dapr, every
// actor host's, as each last told the catalog (app/queue.shared.ts).
import { z } from 'zod';
import type { QueueRow } from '../../store/catalog.port.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, type ZodApp } from './schema.http.ts';
import { listOf } from './schemas.ts';

export const QueueView = z.object({
  tenant_id: z.string(),
  destination: z.string().meta({ description: 'The recipient domain the messages wait for a delivery slot of.' }),
  waiting: z.number().int().meta({ description: 'Messages waiting for a slot.' }),
  in_flight: z.number().int().meta({ description: 'Messages being delivered now.' }),
  oldest_age_seconds: z
    .number()
    .meta({ description: 'Seconds since the oldest waiting message came to the queue; 0 when none waits.' }),
});

/** What the routes read: the queue's rows (a promise: on Dapr they come from the catalog). */
export type QueueSource = () => QueueRow[] | Promise<QueueRow[]>;

function viewsOf(rows: QueueRow[], now: number): z.infer<typeof QueueView>[] {
  return rows
    .map((r) => ({
      tenant_id: r.tenant_id,
      destination: r.destination,
      waiting: r.waiting,
      in_flight: r.in_flight,
      oldest_age_seconds: r.oldest_queued_at === null ? 0 : Math.max(0, (now - r.oldest_queued_at) / 1000),
    }))
    .sort((a, b) => a.tenant_id.localeCompare(b.tenant_id) || a.destination.localeCompare(b.destination));
}

/** GET /v1/queue, on the keyed scope. */
export function queueRoutes(app: ZodApp, queue: QueueSource): void {
  app.get(
    '/v1/queue',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Deliverability'],
        summary: "The tenant's mail in the fair queue, per destination: waiting, in flight, the oldest's age",
        response: { 200: answer("The tenant's rows, by destination.", listOf(QueueView)) },
      },
    },
    async (request, reply) => {
      const tenant = senderOf(request).tenant.id;
      const rows = (await queue()).filter((r) => r.tenant_id === tenant);
      return reply.code(200).send({ data: viewsOf(rows, Date.now()) });
    },
  );
}

/** GET /v1/admin/queue, on the admin scope. */
export function queueAdminRoutes(app: ZodApp, queue: QueueSource): void {
  app.get(
    '/v1/admin/queue',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'The fair queue per tenant and destination: waiting, in flight, the oldest message’s age',
        response: { 200: answer('Every row, by tenant then destination.', listOf(QueueView)) },
      },
    },
    async (_request, reply) => reply.code(200).send({ data: viewsOf(await queue(), Date.now()) }),
  );
}
