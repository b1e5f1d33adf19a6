// The sends of tenants without a quota limit, counted in this process and added to each tenant's
// count by one TenantActor.tally call a second, not one call a send (on Dapr, three sidecar calls
// a send: issue 27). Such a send has nothing to be refused by, but its day's count is kept so
// that a daily limit set later counts it. What a crash loses (at most the last second's tally)
// errs on the side of sending more, for a tenant that had no limit then.
import { utcDay } from '../../lib/now.ts';
import { actor, type Invoker } from '../../runtime/runtime.port.ts';
import { tenantActor } from './tenant.actor.ts';

const FLUSH_MS = 1_000;

export class QuotaTally {
  /** Sends not yet told, by tenant, on `day`. */
  private counts = new Map<string, number>();
  private day = utcDay();
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly invoker: Invoker,
    private readonly report: (message: string, error?: unknown) => void,
    everyMs = FLUSH_MS,
  ) {
    this.timer = setInterval(() => void this.flush(), everyMs);
    this.timer.unref();
  }

  /** One more send of the tenant, now. */
  count(tenantId: string): void {
    const day = utcDay();
    if (day !== this.day) {
      void this.flush();
      this.day = day;
    }
    this.counts.set(tenantId, (this.counts.get(tenantId) ?? 0) + 1);
  }

  /**
   * The tenant's sends counted and not yet told, taken out of the tally: an admission against a
   * limit tells them first, so that the sends before a limit was set count even within the second.
   */
  takePending(tenantId: string): { day: string; sends: number } | null {
    const sends = this.counts.get(tenantId);
    if (sends === undefined) return null;
    this.counts.delete(tenantId);
    return { day: this.day, sends };
  }

  /** Tells each tenant's actor its sends counted so far; one flush at a time. */
  flush(): Promise<void> {
    if (this.counts.size === 0) return this.flushing;
    const counts = this.counts;
    const day = this.day;
    this.counts = new Map();
    this.flushing = this.flushing.then(() =>
      Promise.all(
        [...counts].map(([tenantId, sends]) =>
          actor(this.invoker, tenantActor, tenantId)
            .tally({ day, sends })
            .catch((error: unknown) => this.report(`the quota tally of tenant ${tenantId} was lost`, error)),
        ),
      ).then(() => undefined),
    );
    return this.flushing;
  }

  /** Stops the timer and tells what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
