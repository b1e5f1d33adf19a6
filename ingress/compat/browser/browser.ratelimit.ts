// The browser SDK's rate limits: a token bucket per key and one per (key, client IP), in memory.
// A public key sits in a page anyone can read, so the limits bound what a copied key can do; they
// come on top of the tenant's quota, which the gate enforces. Each ingress process keeps its own
// buckets: on a cluster with N ingress replicas a key can send up to N times its limit.

/** Sends per minute: for the whole key, and for each client IP using it. */
export interface RatePerMinute {
  per_key: number;
  per_ip: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was counted, in ms. */
  at: number;
  /** The limit the bucket was last filled for. */
  capacity: number;
}

export type Take = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Whose allowance a send comes from: an IPv4 address, or an IPv6 address's /64 network, since one
 * IPv6 client commonly holds a whole /64 and could otherwise change address at every send.
 */
export function clientOf(ip: string): string {
  const v4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (v4) return v4[1]!;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export class BrowserRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;
  /** Beyond this many buckets, full ones (idle for a minute or more) are forgotten. */
  private readonly sweepAbove: number;

  constructor(opts: { now?: () => number; sweepAbove?: number } = {}) {
    this.now = opts.now ?? Date.now;
    this.sweepAbove = opts.sweepAbove ?? 50_000;
  }

  /**
   * Takes one send from the key's bucket and from its (key, client) bucket, or from neither: a
   * send refused by one limit does not use up the other.
   */
  take(keyId: string, ip: string, rate: RatePerMinute): Take {
    const now = this.now();
    const key = this.fill(`k ${keyId}`, rate.per_key, now);
    const visitor = this.fill(`i ${keyId} ${clientOf(ip)}`, rate.per_ip, now);
    const waits = [key, visitor].filter((b) => b.tokens < 1).map((b) => ((1 - b.tokens) * 60_000) / b.capacity);
    if (waits.length > 0) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) };
    key.tokens -= 1;
    visitor.tokens -= 1;
    if (this.buckets.size > this.sweepAbove) this.sweep(now);
    return { ok: true };
  }

  /**
   * The bucket under `id`, refilled to `now` at `capacity` a minute. A key's limit changed since
   * applies at once: raised, the bucket gains the difference; lowered, it holds at most the new one.
   */
  private fill(id: string, capacity: number, now: number): Bucket {
    let bucket = this.buckets.get(id);
    if (!bucket) {
      bucket = { tokens: capacity, at: now, capacity };
      this.buckets.set(id, bucket);
    }
    const raised = Math.max(0, capacity - bucket.capacity);
    bucket.tokens = Math.min(capacity, bucket.tokens + raised + ((now - bucket.at) * capacity) / 60_000);
    bucket.at = now;
    bucket.capacity = capacity;
    return bucket;
  }

  /** A bucket untouched for a minute is full again: forgetting it changes nothing. */
  private sweep(now: number): void {
    for (const [id, bucket] of this.buckets) if (now - bucket.at >= 60_000) this.buckets.delete(id);
  }

  /** How many buckets are kept (for tests of the sweep). */
  get size(): number {
    return this.buckets.size;
  }
}
