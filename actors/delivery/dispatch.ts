// What a committed message comes to once it is handed over (`message.ready`): a sandbox message
// is captured in the inbox (signed as delivery would sign it), a live one goes to its
// DeliveryActor; and when a message's retention ends (`message.expired`), its delivery state goes with it.
import { actor, type ActorRuntime } from '../../runtime/runtime.port.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import { MESSAGE_EXPIRED, MESSAGE_READY } from '../message/message.actor.ts';
import type { MessageReady } from '../message/message.state.ts';
import { captureSandbox, type DeliveryDeps, type deliveryActor, type Observers } from './delivery.actor.ts';

export function dispatchMessages(
  runtime: ActorRuntime,
  deps: {
    catalog: Catalog;
    delivery: ReturnType<typeof deliveryActor>;
    /** The DKIM keys a sandbox capture is signed with, as delivery would sign it. */
    signers: DeliveryDeps['signers'];
    /** Hears the tenant of each sandbox message put in the inbox. */
    onCapture?: (tenantId: string) => void;
    observers?: Observers;
  },
): void {
  runtime.subscribe(MESSAGE_READY, async ({ data }) => {
    const ready = data as MessageReady;
    if (ready.sandbox) {
      return void (await captureSandbox(runtime, deps.catalog, ready, {
        signers: deps.signers,
        onCapture: deps.onCapture,
        observers: deps.observers,
      }));
    }
    const d = actor(runtime, deps.delivery, ready.message_id);
    const { attempt, interrupted, number } = await d.begin(undefined);
    if (attempt) await d.attempt({ interrupted, number });
  });
  runtime.subscribe(MESSAGE_EXPIRED, async ({ data }) => {
    await actor(runtime, deps.delivery, (data as { message_id: string }).message_id).forget(undefined);
  });
}
