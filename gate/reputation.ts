// A tenant's reputation breaker, as the API reads and resets it: the TenantActor holds it.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { tenantActor } from '../actors/tenant/tenant.actor.ts';
import type { ReputationView } from '../actors/tenant/reputation.state.ts';

export interface Reputations {
  read(tenantId: string): Promise<ReputationView>;
  /** Closes the breaker and empties its window (an event when it was not closed). */
  reset(tenantId: string): Promise<ReputationView>;
}

export function reputations(invoker: Invoker): Reputations {
  return {
    read: (tenantId) => actor(invoker, tenantActor, tenantId).reputation(undefined),
    reset: (tenantId) => actor(invoker, tenantActor, tenantId).resetReputation(undefined),
  };
}
