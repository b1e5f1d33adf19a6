// Where webhook attempts run: outside any actor turn, in this process, one lane per endpoint with
// at most PER_ENDPOINT attempts at a time. An event comes in from the lifecycle-event fan-out
// (just enqueued on its endpoint's actor) or from a `webhook.due` publication (a retry, a test
// event, a watchdog); either only puts it in its endpoint's lane and returns at once, so a slow or
// dead endpoint holds its own lane and nothing else: no pub/sub dispatch slot, no other endpoint's
// attempts, no actor turn. The lanes queue and pace; what one attempt is (the actor's begin, the
// request, its finish: actors/webhook/fanout.ts) is the caller's. An event waiting in a lane when
// the process dies is not lost: its actor's reminder publishes it again.
import { Fifo } from '../lib/fifo.ts';

/** Attempts under way at once to one endpoint. */
export const PER_ENDPOINT = 8;
/**
 * Events one lane holds at most. Past it (a receiver that hangs while events keep coming) a
 * publication is dropped here: the event waits in its actor's state, whose reminder publishes it
 * again later, so memory stays bounded and nothing is lost.
 */
export const MAX_WAITING = 10_000;

export interface LaneDeps {
  /** Makes one attempt of an event to an endpoint. A throw is logged: the event's reminder tries again. */
  attempt: (endpointId: string, eventId: string) => Promise<void>;
  log: (message: string, error?: unknown) => void;
}

interface Lane {
  waiting: Fifo<string>;
  /** Events in `waiting`: a second publication of one of them adds nothing. */
  queued: Set<string>;
  /** Events whose attempt is under way. */
  underWay: Set<string>;
  /**
   * Events published again while under way: each is queued once more when its attempt ends. The
   * attempt may have found the event not due (its `begin` answered nothing) just before the turn
   * that made it due published it; dropping that publication would leave the event to its
   * watchdog, 30 s later.
   */
  again: Set<string>;
}

export class WebhookLanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly underWay = new Set<Promise<void>>();
  private stopping = false;

  constructor(private readonly deps: LaneDeps) {}

  /** True once drain() began: no attempt starts any more. */
  get draining(): boolean {
    return this.stopping;
  }

  /** Queues an attempt of `eventId` to `endpointId`. Throws while draining, so the publication is kept for later. */
  push(endpointId: string, eventId: string): void {
    if (this.stopping) throw new Error('webhook lanes are draining');
    let lane = this.lanes.get(endpointId);
    if (!lane) {
      lane = { waiting: new Fifo(), queued: new Set(), underWay: new Set(), again: new Set() };
      this.lanes.set(endpointId, lane);
    }
    if (lane.queued.has(eventId)) return;
    if (lane.underWay.has(eventId)) {
      lane.again.add(eventId);
      return;
    }
    if (lane.waiting.length >= MAX_WAITING) return;
    lane.queued.add(eventId);
    lane.waiting.push(eventId);
    this.pump(endpointId, lane);
  }

  private pump(endpointId: string, lane: Lane): void {
    while (!this.stopping && lane.underWay.size < PER_ENDPOINT && lane.waiting.length > 0) {
      const eventId = lane.waiting.shift()!;
      lane.queued.delete(eventId);
      lane.underWay.add(eventId);
      const run = this.deps
        .attempt(endpointId, eventId)
        .catch((error) => this.deps.log(`webhook attempt ${endpointId}/${eventId} failed; its reminder will retry`, error))
        .finally(() => {
          this.underWay.delete(run);
          lane.underWay.delete(eventId);
          if (lane.again.delete(eventId) && !lane.queued.has(eventId)) {
            lane.queued.add(eventId);
            lane.waiting.push(eventId);
          }
          if (lane.underWay.size === 0 && lane.waiting.length === 0) this.lanes.delete(endpointId);
          else this.pump(endpointId, lane);
        });
      this.underWay.add(run);
    }
  }

  /** Starts no more attempts and waits for those under way (each ends by its deadline). */
  async drain(): Promise<void> {
    this.stopping = true;
    while (this.underWay.size > 0) await Promise.allSettled([...this.underWay]);
    this.lanes.clear();
  }

  /** Lanes with work, events waiting or under way: for tests and benchmarks. */
  stats() {
    let waiting = 0;
    let running = 0;
    for (const lane of this.lanes.values()) {
      waiting += lane.waiting.length;
      running += lane.underWay.size;
    }
    return { lanes: this.lanes.size, waiting, running };
  }
}
