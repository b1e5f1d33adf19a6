// What a committed message comes to once it is handed over (`message.ready`): a sandbox message
// is captured in the inbox in its MessageActor's turn (signed as delivery would sign it), a live
// one takes its place in the fair queue (mta/fair.queue.ts), and its DeliveryActor attempts it
// when the queue gives it a slot of its destination; and when a message's retention ends
// (`message.expired`), its delivery state and its opens and clicks go with it.
//
// The subscriber returns once the message has its place, not once it is delivered: a backlog
// waits in the queue, where the tenants take turns, rather than in the runtime's dispatch, which
// would hand it over first come, first served. The hand-over carries the place (a QueuePlace), so
// taking it is no actor turn; what makes it durable is the hand-over itself, which the subscriber
// holds until the message has been attempted (runtime.port.ts's Held): the runtime hands it over
// again should this process die first, or the attempt fail. Where a broker may lose a hand-over
// before it is held (not deliversUntilHandled), the turn that handed it over also set a reminder
// (the message's watchdog, or a retry's `queued` reminder).
import { LRUCache } from 'lru-cache';
import { actor, type ActorRuntime } from '../../runtime/runtime.port.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import { FairQueue, queueLease } from '../../mta/fair.queue.ts';
import { MESSAGE_EXPIRED, MESSAGE_READY, messageActor } from '../message/message.actor.ts';
import type { MessageReady } from '../message/message.state.ts';
import type { deliveryActor } from './delivery.actor.ts';

/** How long a tenant's queue weight is kept before it is read again: a new weight applies within this. */
const WEIGHT_TTL_MS = 10_000;

export function dispatchMessages(
  runtime: ActorRuntime,
  deps: {
    catalog: Catalog;
    delivery: ReturnType<typeof deliveryActor>;
    /** Messages in flight at once per destination (GATEPOST_MX_MAX_CONNECTIONS). */
    slots: number;
    /** Where an attempt that threw is reported (the runtime hands its message over again). */
    report: (message: string, error?: unknown) => void;
  },
): FairQueue {
  const weights = new LRUCache<string, number>({
    max: 10_000,
    ttl: WEIGHT_TTL_MS,
    fetchMethod: async (tenantId) => (await deps.catalog.getTenant(tenantId))?.queue_weight ?? 1,
  });
  const queue = new FairQueue({
    slots: deps.slots,
    async run({ id }) {
      const d = actor(runtime, deps.delivery, id);
      const { attempt, interrupted, number } = await d.begin(undefined);
      if (attempt) await d.attempt({ interrupted, number });
    },
    failed: (ticket, error) => deps.report(`delivery of ${ticket.id} failed; it will be handed over again`, error),
  });

  runtime.subscribe(MESSAGE_READY, async ({ data }) => {
    const ready = data as MessageReady;
    // A sandbox message is captured in its own actor's turn (messageActorWith, sandboxCapture).
    if (ready.sandbox) return void (await actor(runtime, messageActor, ready.message_id).captureSandbox(undefined));
    const until = queue.push({
      id: ready.message_id,
      tenant: ready.tenant_id,
      stream: ready.stream,
      destination: ready.destination,
      queuedAt: ready.queued_at,
      weight: (await weights.fetch(ready.tenant_id)) ?? 1,
    });
    return { until, leaseMs: queueLease(Date.now() - ready.queued_at) };
  });
  runtime.subscribe(MESSAGE_EXPIRED, async ({ data }) => {
    const { message_id } = data as { message_id: string };
    await actor(runtime, deps.delivery, message_id).forget(undefined);
    await deps.catalog.forgetEngagement(message_id);
  });
  return queue;
}
