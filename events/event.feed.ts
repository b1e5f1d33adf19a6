// The tenant's recent lifecycle events, kept in memory for `GET /v1/events` (the CLI's `listen`
// reads it, so a development server that Gatepost cannot reach still gets every event). Fed by
// the process that fans events out to webhooks, for the tenants someone reads it for: from a
// tenant's first read until WATCH_MS after its last (a listener asks again every 25 s at most),
// so a tenant nobody listens to costs nothing. Bounded: the last PER_TENANT events of at most
// TENANTS tenants. Not durable: a restart starts an empty feed, and a cursor of the feed before
// it reads from the first event kept.
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { PublishedEnvelope } from './email.event.ts';

const PER_TENANT = 1_000;
const TENANTS = 1_000;
export const WATCH_MS = 2 * 60_000;

interface Entry {
  seq: number;
  event: PublishedEnvelope;
}

interface TenantFeed {
  entries: Entry[];
  ids: Set<string>;
  waiters: Set<() => void>;
}

export interface FeedPage {
  data: PublishedEnvelope[];
  /** Where the next read starts: `<boot>.<seq>`. */
  cursor: string;
}

export class EventFeed {
  /** Tells this process's cursors from a former one's. */
  private readonly boot = randomBytes(4).toString('hex');
  private seq = 0;
  /** Each read sets its tenant's feed again, which keeps it WATCH_MS more. */
  private readonly tenants = new LRUCache<string, TenantFeed>({ max: TENANTS, ttl: WATCH_MS, ttlAutopurge: true });

  /** The tenant's feed, kept WATCH_MS from now: made by a tenant's first read. */
  private watch(tenantId: string): TenantFeed {
    const feed = this.tenants.get(tenantId) ?? { entries: [], ids: new Set(), waiters: new Set() };
    this.tenants.set(tenantId, feed);
    return feed;
  }

  /** One more event, kept if someone reads the tenant's feed; one already in it (pub/sub delivers at least once) is left out. */
  push(tenantId: string, event: PublishedEnvelope): void {
    const feed = this.tenants.get(tenantId);
    if (!feed || feed.ids.has(event.id)) return;
    feed.entries.push({ seq: ++this.seq, event });
    feed.ids.add(event.id);
    if (feed.entries.length > PER_TENANT) feed.ids.delete(feed.entries.shift()!.event.id);
    for (const wake of feed.waiters) wake();
  }

  /** The sequence number a cursor stands for: none is now (what comes next); another process's is the start. */
  private position(after: string | undefined): number {
    if (after === undefined) return this.seq;
    const [boot, seq] = after.split('.');
    return boot === this.boot && /^\d+$/.test(seq ?? '') ? Number(seq) : 0;
  }

  private page(feed: TenantFeed, from: number, limit: number, keep: (e: PublishedEnvelope) => boolean): FeedPage {
    const data: PublishedEnvelope[] = [];
    let last = from;
    for (const e of feed.entries) {
      if (e.seq <= from) continue;
      if (data.length === limit) break;
      last = e.seq;
      if (keep(e.event)) data.push(e.event);
    }
    // Past every event seen, shown or not, so a reader never looks at the same ones again.
    return { data, cursor: `${this.boot}.${Math.max(last, from)}` };
  }

  /**
   * The events after `after` (none: from now) that `keep` lets through, oldest first. When there
   * is none yet, waits up to `waitMs` for one, or until `signal` aborts (the client went away,
   * the server drains).
   */
  async read(
    tenantId: string,
    opts: { after?: string; limit: number; waitMs: number; keep: (e: PublishedEnvelope) => boolean; signal: AbortSignal },
  ): Promise<FeedPage> {
    const feed = this.watch(tenantId);
    let from = this.position(opts.after);
    const until = Date.now() + opts.waitMs;
    for (;;) {
      const page = this.page(feed, from, opts.limit, opts.keep);
      const left = until - Date.now();
      if (page.data.length > 0 || left <= 0 || opts.signal.aborted) return page;
      from = Number(page.cursor.split('.')[1]);
      await this.next(feed, left, opts.signal);
    }
  }

  /** Resolves when the feed gets an event, `ms` pass, or `signal` aborts. */
  private next(feed: TenantFeed, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        feed.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      feed.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
