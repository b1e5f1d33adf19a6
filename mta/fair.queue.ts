// The per-tenant fair queue in front of delivery (docs/deliverability.md#the-fair-queue): each
// destination (a recipient domain) has as many slots as the MX pool opens connections to a host,
// and when a slot frees, the next message is chosen across the tenants waiting for that
// destination by deficit round robin (Shreedhar and Varghese, 1995) with a weight per tenant:
// each round a tenant's deficit grows by its weight and it takes one message per whole unit.
// Within a tenant, transactional mail goes before broadcasts. A message first in its tenant's line
// waits for at most Σ ⌈w⌉ of the other tenants waiting for the destination slots to be given out
// before it takes one (one round); the k-th waits for at most ⌈k / w⌉ rounds.
//
// It lives in memory, one per process: what makes it durable is the hand-over itself, which the
// runtime holds for as long as its message waits or is in flight here (runtime.port.ts's Held,
// for `queueLease`), and delivers again after a crash, the message taking its place by `queuedAt`.
import type { QueueRow } from '../store/catalog.port.ts';
import { deferred, type Deferred } from '../lib/deferred.ts';

export type Stream = 'transactional' | 'broadcast';

/** The bounds of `queueLease`. */
export const QUEUE_LEASE = { minMs: 30_000, maxMs: 5 * 60_000 };

/**
 * How long after now a waiting message's hand-over may be delivered again: as long as it has
 * waited so far, within QUEUE_LEASE. After a crash a waiting message comes back within about as
 * long as it had waited (at most five minutes); one waiting long renews its place about once per
 * doubling of its wait, and a message still waiting in this process's queue is not pushed twice.
 */
export function queueLease(waitedMs: number): number {
  return Math.min(QUEUE_LEASE.maxMs, Math.max(QUEUE_LEASE.minMs, waitedMs));
}

export interface Ticket {
  /** The message; a ticket pushed again while its message waits or is in flight is dropped. */
  id: string;
  tenant: string;
  stream: Stream;
  destination: string;
  /** When the message first came to the queue (ms since epoch): its place in its tenant's line. */
  queuedAt: number;
  /** The tenant's weight (> 0), as read when the ticket was made: the newest one pushed counts. */
  weight: number;
}

/** A tenant's line for one destination, ordered by `queuedAt`: appended to, or put back in place after a restart. */
class Line {
  /** Taken tickets are cleared (undefined) until the taken prefix is dropped. */
  private items: (Ticket | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  get first(): Ticket | undefined {
    return this.items[this.head];
  }

  add(t: Ticket): void {
    const last = this.items[this.items.length - 1];
    if (!last || last.queuedAt <= t.queuedAt) {
      this.items.push(t);
      return;
    }
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.queuedAt <= t.queuedAt) lo = mid + 1;
      else hi = mid;
    }
    this.items.splice(lo, 0, t);
  }

  take(): Ticket | undefined {
    if (this.head >= this.items.length) return undefined;
    const t = this.items[this.head]!;
    this.items[this.head++] = undefined;
    // Drop the taken prefix once it is half the array, so memory follows the backlog.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return t;
  }
}

interface Flow {
  tenant: string;
  weight: number;
  deficit: number;
  /** Set when the flow comes to the head of the round: its weight is added to its deficit once. */
  fresh: boolean;
  lines: Record<Stream, Line>;
  inFlight: number;
}

interface Destination {
  inFlight: number;
  flows: Map<string, Flow>;
  /** The flows with messages waiting, in round order; the first is the one being served. */
  round: Flow[];
}

const waitingIn = (f: Flow) => f.lines.transactional.length + f.lines.broadcast.length;

export class FairQueue {
  private readonly byName = new Map<string, Destination>();
  /**
   * Messages waiting or in flight, each with when its run settles (resolved, or rejected with why
   * it failed), so a ticket pushed twice is dropped.
   */
  private readonly present = new Map<string, Deferred<void>>();
  private inFlight = 0;
  private closed = false;
  private idle: (() => void)[] = [];

  /**
   * `slots`: messages in flight at once per destination. `run`: delivers one ticket's message; its
   * slot frees when it settles (a rejection is `failed`'s to report, and the runtime hands the
   * message over again).
   */
  constructor(
    private readonly opts: {
      slots: number;
      run: (ticket: Ticket) => Promise<unknown>;
      failed?: (ticket: Ticket, error: unknown) => void;
    },
  ) {}

  /**
   * Queues a ticket, unless its message already waits or is in flight (a hand-over delivered
   * again). Resolves once its message has been run here, rejects if the run failed: the earlier
   * ticket's outcome for a message pushed twice.
   */
  push(ticket: Ticket): Promise<void> {
    const present = this.present.get(ticket.id);
    if (present) return present.promise;
    const settled = deferred();
    // Whoever holds the hand-over handles a failure; one nobody awaits (a test's push) is not "unhandled".
    settled.promise.catch(() => undefined);
    this.present.set(ticket.id, settled);
    const d = this.destinationOf(ticket.destination);
    let flow = d.flows.get(ticket.tenant);
    if (!flow) {
      flow = {
        tenant: ticket.tenant,
        weight: ticket.weight,
        deficit: 0,
        fresh: true,
        lines: { transactional: new Line(), broadcast: new Line() },
        inFlight: 0,
      };
      d.flows.set(ticket.tenant, flow);
    }
    flow.weight = ticket.weight;
    if (waitingIn(flow) === 0) {
      flow.fresh = true;
      d.round.push(flow);
    }
    flow.lines[ticket.stream].add(ticket);
    this.pump(ticket.destination, d);
    return settled.promise;
  }

  /**
   * Gives out no more slots and resolves once nothing is in flight (a process draining). What
   * still waits is never settled: the runtime hands it over again, elsewhere or after a restart.
   */
  close(): Promise<void> {
    this.closed = true;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** One row per tenant and destination with a message waiting or in flight. */
  rows(): QueueRow[] {
    const rows: QueueRow[] = [];
    for (const [destination, d] of this.byName) {
      for (const f of d.flows.values()) {
        const firsts = [f.lines.transactional.first, f.lines.broadcast.first].flatMap((t) => (t ? [t.queuedAt] : []));
        rows.push({
          tenant_id: f.tenant,
          destination,
          waiting: waitingIn(f),
          in_flight: f.inFlight,
          oldest_queued_at: firsts.length > 0 ? Math.min(...firsts) : null,
        });
      }
    }
    return rows;
  }

  /** Per destination, summed over tenants: what the metrics show. */
  destinations(): { destination: string; waiting: number; in_flight: number }[] {
    return [...this.byName.entries()].map(([destination, d]) => ({
      destination,
      waiting: d.round.reduce((n, f) => n + waitingIn(f), 0),
      in_flight: d.inFlight,
    }));
  }

  private destinationOf(name: string): Destination {
    let d = this.byName.get(name);
    if (!d) this.byName.set(name, (d = { inFlight: 0, flows: new Map(), round: [] }));
    return d;
  }

  /** Gives out the destination's free slots. */
  private pump(name: string, d: Destination): void {
    while (!this.closed && d.inFlight < this.opts.slots) {
      const next = this.next(d);
      if (!next) return;
      const [flow, ticket] = next;
      d.inFlight++;
      flow.inFlight++;
      this.inFlight++;
      const settle = (error?: unknown) => {
        d.inFlight--;
        flow.inFlight--;
        const settled = this.present.get(ticket.id)!;
        this.present.delete(ticket.id);
        if (error === undefined) settled.resolve();
        else settled.reject(error);
        if (--this.inFlight === 0 && this.closed) for (const resolve of this.idle.splice(0)) resolve();
        if (flow.inFlight === 0 && waitingIn(flow) === 0) d.flows.delete(flow.tenant);
        if (d.flows.size === 0) this.byName.delete(name);
        else this.pump(name, d);
      };
      void this.opts.run(ticket).then(
        () => settle(),
        (error: unknown) => {
          this.opts.failed?.(ticket, error);
          settle(error ?? new Error('the delivery failed'));
        },
      );
    }
  }

  /** Deficit round robin: the next ticket of the destination, and its flow. */
  private next(d: Destination): [Flow, Ticket] | undefined {
    for (;;) {
      const flow = d.round[0];
      if (!flow) return undefined;
      if (flow.fresh) {
        flow.deficit += flow.weight;
        flow.fresh = false;
      }
      if (flow.deficit >= 1) {
        flow.deficit -= 1;
        const ticket = flow.lines.transactional.take() ?? flow.lines.broadcast.take()!;
        if (waitingIn(flow) === 0) {
          // A flow that empties leaves the round and keeps no credit (DRR's rule).
          d.round.shift();
          flow.deficit = 0;
        }
        return [flow, ticket];
      }
      // Its turn is used up: to the back of the round.
      d.round.push(d.round.shift()!);
      flow.fresh = true;
    }
  }
}
