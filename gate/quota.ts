// Sends taken from tenants' quotas a group at a time. Every admission needs one from its tenant's
// actor, which takes one call at a time: asked once a send, it was a call and a turn a send, all
// of a tenant's sends in a line (and, on Dapr, a sidecar round trip each). The admissions that ask
// within one turn of the event loop now make one call to their tenant's actor together.
import type { Invoker } from '../runtime/runtime.port.ts';
import { TENANT_ACTOR, type QuotaGrant, type QuotaTicket } from '../actors/tenant/tenant.actor.ts';
import type { Tenant } from '../store/catalog.port.ts';

interface Waiting {
  tenant: Tenant;
  tickets: { resolve: (ticket: QuotaTicket) => void; reject: (error: unknown) => void }[];
}

export class QuotaTaker {
  /** Asked for in this turn of the event loop, by tenant id. */
  private waiting = new Map<string, Waiting>();

  constructor(private readonly invoker: Invoker) {}

  take(tenant: Tenant): Promise<QuotaTicket> {
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) setImmediate(() => this.flush());
      let group = this.waiting.get(tenant.id);
      if (!group) this.waiting.set(tenant.id, (group = { tenant, tickets: [] }));
      group.tickets.push({ resolve, reject });
    });
  }

  private flush(): void {
    const groups = this.waiting;
    this.waiting = new Map();
    for (const { tenant, tickets } of groups.values()) {
      // Not waiting for the grant to be durable: the admissions that use it wait for their own
      // turns, which are made durable after it (and an answer that uses none loses nothing).
      this.invoker
        .invoke<QuotaGrant>(
          TENANT_ACTOR,
          tenant.id,
          'reserve',
          { quota: tenant.quota, count: tickets.length },
          { beforeDurable: true },
        )
        .then(
          ({ granted, refusal }) =>
            tickets.forEach((t, i) => t.resolve(i < granted ? GRANTED : { granted: false, refusal: refusal! })),
          (error: unknown) => tickets.forEach((t) => t.reject(error)),
        );
    }
  }
}

const GRANTED: QuotaTicket = { granted: true };
