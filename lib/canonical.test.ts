import { describe, expect, it } from 'vitest';
import { canonicalJson, MAX_CANONICAL_DEPTH, nestsDeeperThan } from './canonical.ts';

describe('canonicalJson', () => {
  it('writes every object with its keys sorted, at any depth, and arrays in their order', () => {
    expect(canonicalJson({ to: 'b@example.com', data: { z: 1, a: [{ y: true, b: null }] }, cc: ['x', 'a'] })).toBe(
      '{"cc":["x","a"],"data":{"a":[{"b":null,"y":true}],"z":1},"to":"b@example.com"}',
    );
  });

  it('gives one string for equal values written in any key order', () => {
    const a = JSON.parse('{"subject":"Hi","headers":{"X-B":"2","X-A":"1"},"tags":["t"]}');
    const b = JSON.parse('{"tags":["t"],"headers":{"X-A":"1","X-B":"2"},"subject":"Hi"}');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
  });

  it('writes index-like keys first, by number, as an object built in sorted order enumerates them', () => {
    // Hashes stored by earlier versions were made this way; a replayed request must still match.
    expect(canonicalJson({ b: 1, 10: 'ten', a: 2, 9: 'nine' })).toBe('{"9":"nine","10":"ten","a":2,"b":1}');
  });

  it('drops undefined values, writes a Date as JSON does, and keeps a "__proto__" key', () => {
    expect(canonicalJson({ b: undefined, a: new Date(0) })).toBe('{"a":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson(JSON.parse('{"z":1,"__proto__":{"b":2,"a":1}}'))).toBe('{"__proto__":{"a":1,"b":2},"z":1}');
  });
});

describe('depth', () => {
  const nested = (depth: number) => JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth)) as unknown;

  it('refuses a value nested 10,000 deep with a RangeError of its own, not a stack overflow', () => {
    expect(() => canonicalJson({ data: nested(10_000) })).toThrow(/more than 64 deep/);
    expect(canonicalJson(nested(MAX_CANONICAL_DEPTH))).toMatch(/^\{"a":/);
  });

  it('tells how deep a value nests, at any depth', () => {
    expect(nestsDeeperThan(nested(100_000), 32)).toBe(true);
    expect(nestsDeeperThan(nested(32), 32)).toBe(false);
    expect(nestsDeeperThan(nested(33), 32)).toBe(true);
    expect(nestsDeeperThan([[[]]], 2)).toBe(true);
    expect(nestsDeeperThan('text', 0)).toBe(false);
  });
});
