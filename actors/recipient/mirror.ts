// The catalog's list of suppressions (what GET /v1/suppressions pages through, and the index
// admission reads: suppression.index.ts) follows the RecipientActors, which own each address's
// state: every `suppression.changed` is mirrored. A suppression is listed by its actor's own turn
// before this; a removal only here, once the actor has saved it.
import { actor, type ActorRuntime } from '../../runtime/runtime.port.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import { recipientActor, recipientActorId, SUPPRESSION_CHANGED, type SuppressionChanged } from './recipient.actor.ts';

export function mirrorSuppressions(runtime: ActorRuntime, catalog: Catalog): void {
  // The list follows the actor: re-read it rather than trust the order events arrive in.
  runtime.subscribe(SUPPRESSION_CHANGED, async ({ data }) => {
    const { tenant_id, address } = data as SuppressionChanged;
    const current = await actor(runtime, recipientActor, recipientActorId(tenant_id, address)).check(undefined);
    if (current) await catalog.putSuppression(current);
    else await catalog.deleteSuppression(tenant_id, address);
  });
}
