// Opens and clicks recorded in groups (issue 24's speed goal): the pixel and the redirect answer
// at once, and the events of every message hit in the meantime go out together, a moment later,
// as one durable publication (ENGAGEMENT_EVENTS), which actors/webhook/fanout.ts stores apart
// from the messages' actors and hands to webhooks. Measured (bench/RESULTS.md, "Tracking: clicks
// recorded in groups"): one actor turn a click, which rewrote the message's whole timeline, ran
// bench:tracking at 0.27 of a bare Fastify 302 on a busy machine, at 328-451 µs of CPU a click;
// the groups at 0.45-0.55, at 157-194 µs. A crash loses what waits here: the hits of the last
// FLUSH_MS or so, whose answers have gone out (docs/tracking.md).
import type { Publisher } from '../runtime/runtime.port.ts';
import { ENGAGEMENT_EVENTS, type EngagementBatch, type EngagementEvent } from '../events/email.event.ts';

/** How long a hit waits for others to go with it. */
export const FLUSH_MS = 10;
/** The most events one publication carries; more wait for the next. */
const MAX_BATCH = 1000;
/** How long after a failed publication it is tried again. */
const RETRY_MS = 1000;

export class EngagementRecorder {
  private waiting: EngagementEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** The publication under way: one at a time, so they go out in the order their hits came. */
  private sending: Promise<void> | null = null;

  constructor(
    private readonly publisher: Publisher,
    private readonly log: (message: string, error?: unknown) => void,
  ) {}

  /** Queues an event; it is published within about FLUSH_MS. */
  add(event: EngagementEvent): void {
    this.waiting.push(event);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Publishes everything waiting (what stopping the server calls); resolves once it is durable. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.sending) await this.sending;
    if (this.waiting.length === 0) return;
    const events = this.waiting.splice(0, MAX_BATCH);
    this.sending = this.publisher.publish(ENGAGEMENT_EVENTS, { events } satisfies EngagementBatch).then(
      () => undefined,
      (error: unknown) => {
        // Kept, ahead of what came since, and tried again.
        this.waiting.unshift(...events);
        this.log(`publishing ${events.length} opens and clicks failed; will retry`, error);
        this.timer ??= setTimeout(() => void this.flush(), RETRY_MS);
      },
    );
    await this.sending;
    this.sending = null;
    if (this.waiting.length > 0) this.timer ??= setTimeout(() => void this.flush(), 0);
  }
}
