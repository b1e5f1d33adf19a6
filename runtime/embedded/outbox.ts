// Durable publish/subscribe for the embedded runtime: a published message is an outbox row
// committed with the turn that published it; after the commit it is handed to its topic's
// subscriber, and the row is deleted once the subscriber returns, or, for a delivery it holds
// (runtime.port.ts's Held), once the hold ends. A subscriber that throws, or a hold that fails, is
// called again with backoff; after a crash every row still present is dispatched again. A held
// row takes no dispatch slot: a backlog the fair queue holds does not stop other topics.
import type { Delivery, Subscriber } from '../runtime.port.ts';
import type { Db } from '../../lib/sqlite.ts';
import { Fifo } from '../../lib/fifo.ts';

export interface OutboxRow extends Delivery {
  seq: number;
}

const retryDelayMs = (attempt: number) => Math.min(60_000, 250 * 2 ** Math.min(attempt, 8));

export class OutboxDispatcher {
  private readonly subscribers = new Map<string, Subscriber>();
  private readonly ready = new Fifo<OutboxRow>();
  private readonly attempts = new Map<number, number>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private running = 0;
  private stopped = true;
  private idle: (() => void)[] = [];

  constructor(
    private readonly done: (seq: number) => void,
    private readonly onError: (row: OutboxRow, error: unknown) => void,
    private readonly concurrency = 64,
  ) {}

  subscribe(topic: string, subscriber: Subscriber): void {
    if (this.subscribers.has(topic)) throw new Error(`topic ${topic} already has a subscriber`);
    this.subscribers.set(topic, subscriber);
  }

  /** Whether a publication on `topic` is to be stored and dispatched: the topic has a subscriber. */
  subscribes(topic: string): boolean {
    return this.subscribers.has(topic);
  }

  start(db: Db): void {
    this.stopped = false;
    const rows = db.prepare('SELECT seq, delivery_id AS id, topic, data FROM outbox ORDER BY seq').all() as {
      seq: number;
      id: string;
      topic: string;
      data: string;
    }[];
    for (const r of rows) this.ready.push({ seq: r.seq, id: r.id, topic: r.topic, data: JSON.parse(r.data) });
    this.pump();
  }

  /** A committed row, ready to dispatch. */
  add(row: OutboxRow): void {
    this.ready.push(row);
    this.pump();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  get backlog(): number {
    return this.ready.length + this.running + this.retryTimers.size;
  }

  private pump(): void {
    while (!this.stopped && this.running < this.concurrency && this.ready.length > 0) {
      const row = this.ready.shift()!;
      const subscriber = this.subscribers.get(row.topic);
      if (!subscriber) {
        // Nobody subscribes (any more): drop it, as a broker drops a message no subscription takes.
        this.done(row.seq);
        continue;
      }
      this.running++;
      const handled = () => {
        this.attempts.delete(row.seq);
        this.done(row.seq);
      };
      subscriber({ id: row.id, topic: row.topic, data: row.data }).then(
        (held) => {
          // Held: the row stays until the hold ends (a restart before then dispatches it again),
          // or past it, should the hold end once the runtime has stopped writing.
          if (held)
            held.until.then(
              () => this.stopped || handled(),
              (error: unknown) => this.retry(row, error),
            );
          else handled();
          this.settle();
        },
        (error) => {
          this.retry(row, error);
          this.settle();
        },
      );
    }
  }

  private retry(row: OutboxRow, error: unknown): void {
    const attempt = (this.attempts.get(row.seq) ?? 0) + 1;
    this.attempts.set(row.seq, attempt);
    this.onError(row, error);
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.add(row);
    }, retryDelayMs(attempt));
    this.retryTimers.add(timer);
  }

  private settle(): void {
    this.running--;
    if (this.running === 0 && this.stopped) {
      for (const resolve of this.idle.splice(0)) resolve();
    }
    this.pump();
  }
}
