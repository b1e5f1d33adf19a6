import { describe, expect, it } from 'vitest';
import { isoTime } from './now.ts';

describe('isoTime', () => {
  it('is the current time in ISO 8601, moving with the clock', async () => {
    const before = Date.now();
    const first = isoTime();
    expect(Date.parse(first)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(first)).toBeLessThanOrEqual(Date.now());
    await new Promise((r) => setTimeout(r, 5));
    expect(Date.parse(isoTime())).toBeGreaterThan(Date.parse(first));
  });

  it('is the ISO string of a given time, whatever was asked before', () => {
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(Date.UTC(2026, 10, 24, 13, 0, 0, 5))).toBe('2026-11-24T13:00:00.005Z');
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});
