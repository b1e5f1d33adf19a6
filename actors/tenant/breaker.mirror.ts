// Each tenant's breaker status, mirrored into the catalog from its transitions: on Dapr the actor
// state store (Redis) is no place to list every tenant's breaker from at scrape time, so
// GET /metrics gauges them from the catalog (`breakerStates`). Each transition of a tenant's own
// breaker (not a domain's) is a `tenant.reputation_changed` event; the webhook fan-out hands it to
// this. A repeat keeps one row, and a transition heard late never replaces a newer one (by its time).
import type { EmailEvent } from '../../events/email.event.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { ReputationChange } from './reputation.state.ts';

/** What hears each published event for the mirror; throws (and the event comes again) when the catalog cannot be written. */
export function breakerMirror(catalog: Pick<Catalog, 'putBreakerState'>): (e: EmailEvent) => Promise<void> {
  return async ({ tenant_id, event }) => {
    if (event.type !== 'tenant.reputation_changed') return;
    const change = event.data as unknown as ReputationChange;
    if (change.domain !== null) return;
    await catalog.putBreakerState(tenant_id, change.to, Date.parse(event.created_at));
  };
}
