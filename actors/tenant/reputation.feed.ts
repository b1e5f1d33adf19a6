// The reputation breakers' input: every lifecycle event that says something of how a tenant's
// live mail is received (a delivery accepted, a hard bounce, a 5.7.x block, a complaint) goes to
// its TenantActor, with the sending domain the event names (`sending_domain`, the verified From
// domain) for that domain's own breaker. Sandbox captures and soft bounces say nothing of it. A topic has one
// subscriber, the webhook fan-out (actors/webhook/fanout.ts), which hands each event on to this.
import { actor, type Invoker } from '../../runtime/runtime.port.ts';
import type { EmailEvent, PublishedEnvelope } from '../../events/email.event.ts';
import type { BreakerSettings, ReputationSignal } from './reputation.state.ts';
import { tenantActor } from './tenant.actor.ts';

export function signalOf(event: PublishedEnvelope): ReputationSignal | null {
  if (event.type === 'email.sent') return event.data.sandbox === true ? null : 'sent';
  if (event.type === 'email.complained') return 'complaint';
  if (event.type !== 'email.bounced') return null;
  const type = event.data.bounce_type;
  return type === 'hard' ? 'hard' : type === 'block' ? 'block' : null;
}

/** What hears each published event for the breaker; throws (and the event comes again) when the tenant's actor cannot be told. */
export function reputationListener(invoker: Invoker, settings: BreakerSettings): (e: EmailEvent) => Promise<void> {
  return async ({ tenant_id, event }) => {
    const signal = signalOf(event);
    if (!signal) return;
    // The sending domain the delivery's outcome names, whose own breaker hears of it too.
    const domain =
      'sending_domain' in event.data && typeof event.data.sending_domain === 'string' ? event.data.sending_domain : null;
    await actor(invoker, tenantActor, tenant_id).observeReputation({ signal, domain, settings });
  };
}
