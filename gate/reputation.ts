// A tenant's reputation breakers and its sending domains' warmup, as the API reads and sets them:
// the TenantActor holds them.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { tenantActor, type TenantReputation } from '../actors/tenant/tenant.actor.ts';
import type { DomainWarmupView, WarmupSettings } from '../actors/tenant/warmup.state.ts';

export type { DomainWarmupView, TenantReputation, WarmupSettings };

export interface Reputations {
  read(tenantId: string): Promise<TenantReputation>;
  /** Closes every breaker of the tenant and empties its window (an event for each that was not closed). */
  reset(tenantId: string): Promise<TenantReputation>;
  /** A sending domain's warmup (`domain`: its name). */
  warmup(tenantId: string, domain: string): Promise<DomainWarmupView>;
  /** The operator's word on a domain's warmup: skip it, or restart the ramp at `day`. */
  setWarmup(
    tenantId: string,
    domain: string,
    change: { action: 'skip' } | { action: 'restart'; day: number },
  ): Promise<DomainWarmupView>;
}

/** `warmup`: the settings the actors run with (GATEPOST_WARMUP*), so the caps shown are the ones held to. */
export function reputations(invoker: Invoker, warmup: WarmupSettings): Reputations {
  const tenant = (id: string) => actor(invoker, tenantActor, id);
  return {
    read: (tenantId) => tenant(tenantId).reputation(undefined),
    reset: (tenantId) => tenant(tenantId).resetReputation(undefined),
    warmup: (tenantId, domain) => tenant(tenantId).warmup({ domain, settings: warmup }),
    setWarmup: (tenantId, domain, change) => tenant(tenantId).setWarmup({ domain, change, settings: warmup }),
  };
}
