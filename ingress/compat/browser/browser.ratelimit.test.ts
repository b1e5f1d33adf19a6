// The browser rate limits on a clock the test moves: per key, per (key, IP), and neither spent
// when the other refuses.
import { describe, expect, it } from 'vitest';
import { BrowserRateLimiter, clientOf } from './browser.ratelimit.ts';

function limiter() {
  const clock = { now: 1_000_000 };
  return { clock, limits: new BrowserRateLimiter({ now: () => clock.now, sweepAbove: 3 }) };
}

describe('BrowserRateLimiter', () => {
  it('allows a burst of the per-IP limit, then answers how long until the next send', () => {
    const { limits } = limiter();
    const rate = { per_key: 100, per_ip: 3 };
    expect([1, 2, 3].map(() => limits.take('key_a', '10.0.0.1', rate).ok)).toEqual([true, true, true]);
    // 3 a minute: one more token in 20 s.
    expect(limits.take('key_a', '10.0.0.1', rate)).toEqual({ ok: false, retryAfterSeconds: 20 });
    // Another IP, and the same IP with another key, have their own buckets.
    expect(limits.take('key_a', '10.0.0.2', rate).ok).toBe(true);
    expect(limits.take('key_b', '10.0.0.1', rate).ok).toBe(true);
  });

  it('refills with time, never above the limit', () => {
    const { clock, limits } = limiter();
    const rate = { per_key: 100, per_ip: 2 };
    limits.take('key_a', 'ip', rate);
    limits.take('key_a', 'ip', rate);
    clock.now += 29_000;
    expect(limits.take('key_a', 'ip', rate)).toEqual({ ok: false, retryAfterSeconds: 1 });
    clock.now += 1_000;
    expect(limits.take('key_a', 'ip', rate).ok).toBe(true);
    clock.now += 3_600_000;
    expect([1, 2, 3].map(() => limits.take('key_a', 'ip', rate).ok)).toEqual([true, true, false]);
  });

  it('limits the key across IPs, and a refused send spends neither bucket', () => {
    const { clock, limits } = limiter();
    const rate = { per_key: 2, per_ip: 10 };
    expect(limits.take('key_a', 'ip1', rate).ok).toBe(true);
    expect(limits.take('key_a', 'ip2', rate).ok).toBe(true);
    expect(limits.take('key_a', 'ip3', rate)).toEqual({ ok: false, retryAfterSeconds: 30 });
    // ip3 spent nothing: once the key refills, ip3 still has its whole allowance.
    clock.now += 60_000;
    const tight = { per_key: 100, per_ip: 10 };
    expect(Array.from({ length: 11 }, () => limits.take('key_a', 'ip3', tight).ok).filter(Boolean)).toHaveLength(10);
  });

  it('applies a changed limit at once: raised, the difference is there; lowered, the excess is gone', () => {
    const { limits } = limiter();
    limits.take('key_a', 'ip', { per_key: 100, per_ip: 1 });
    expect(limits.take('key_a', 'ip', { per_key: 100, per_ip: 1 }).ok).toBe(false);
    expect(limits.take('key_a', 'ip', { per_key: 100, per_ip: 3 }).ok).toBe(true);
    expect(limits.take('key_a', 'ip', { per_key: 100, per_ip: 3 }).ok).toBe(true);
    expect(limits.take('key_a', 'ip', { per_key: 100, per_ip: 3 }).ok).toBe(false);

    limits.take('key_b', 'ip', { per_key: 50, per_ip: 50 });
    expect(Array.from({ length: 3 }, () => limits.take('key_b', 'ip', { per_key: 50, per_ip: 2 }).ok)).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('forgets buckets idle for a minute once it keeps many', () => {
    const { clock, limits } = limiter();
    const rate = { per_key: 10, per_ip: 10 };
    limits.take('key_a', 'ip1', rate);
    expect(limits.size).toBe(2);
    clock.now += 60_000;
    limits.take('key_b', 'ip2', rate); // 4 buckets: over 3, the idle ones go
    expect(limits.size).toBe(2);
  });
});

describe('clientOf', () => {
  it('counts an IPv4 address (also IPv4-mapped) as itself, and an IPv6 address by its /64', () => {
    expect(clientOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientOf('2001:db8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(clientOf('2001:DB8:0000:0001::7')).toBe('2001:db8:0:1::/64');
    expect(clientOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientOf('::1')).toBe('0:0:0:0::/64');
  });

  it('gives two addresses of one /64 one allowance', () => {
    const { limits } = limiter();
    const rate = { per_key: 100, per_ip: 1 };
    expect(limits.take('key_a', '2001:db8:0:1::1', rate).ok).toBe(true);
    expect(limits.take('key_a', '2001:db8:0:1::2', rate).ok).toBe(false);
    expect(limits.take('key_a', '2001:db8:0:2::1', rate).ok).toBe(true);
  });
});
