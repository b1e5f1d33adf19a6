import { describe, expect, it } from 'vitest';
import { derivedId, derivedIdOrderedBy, newId } from './ids.ts';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** The 128 bits an id's 26 characters hold (the last character's two low bits are padding). */
const bitsOf = (id: string) =>
  [...id.slice(id.indexOf('_') + 1)].reduce((n, c) => (n << 5n) | BigInt(ALPHABET.indexOf(c)), 0n) >> 2n;

describe('newId', () => {
  it('is the prefix, an underscore and 26 lower-case Crockford base32 characters', () => {
    for (const prefix of ['msg', 'evt', 'ten']) expect(newId(prefix)).toMatch(/^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it('starts with the milliseconds it was made at, so later ids sort after earlier ones', async () => {
    const before = Date.now();
    const id = newId('msg');
    const after = Date.now();
    const ms = Number(bitsOf(id) >> 80n);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
    await new Promise((r) => setTimeout(r, 2));
    expect(newId('msg') > id).toBe(true);
  });

  it('does not repeat', () => {
    const ids = new Set(Array.from({ length: 100_000 }, () => newId('evt')));
    expect(ids.size).toBe(100_000);
  });
});

describe('derivedId', () => {
  it('is the same for the same parts and differs for others', () => {
    expect(derivedId('msg', 'ten_1', 'key')).toBe(derivedId('msg', 'ten_1', 'key'));
    expect(derivedId('msg', 'ten_1', 'key')).not.toBe(derivedId('msg', 'ten_2', 'key'));
  });

  it('keeps the ids earlier versions derived (stored messages are found by them)', () => {
    // The first 128 bits of sha256("ten_1\0key") in base32.
    expect(derivedId('msg', 'ten_1', 'key')).toBe('msg_8zcret8wreq4x976bs0mcw2130');
  });
});

describe('derivedIdOrderedBy', () => {
  it('is the same for the same parts, differs for others, and carries the time of the id it is ordered by', async () => {
    const first = newId('con');
    await new Promise((r) => setTimeout(r, 2));
    const second = newId('con');
    const a = derivedIdOrderedBy('msg', first, 'ten_1', 'live', `bro_1:${first}`);
    expect(a).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(derivedIdOrderedBy('msg', first, 'ten_1', 'live', `bro_1:${first}`)).toBe(a);
    expect(derivedIdOrderedBy('msg', first, 'ten_2', 'live', `bro_1:${first}`)).not.toBe(a);
    expect(bitsOf(a) >> 80n).toBe(bitsOf(first) >> 80n);
    // The rest is the parts' hash, as derivedId's.
    const low80 = (id: string) => bitsOf(id) & ((1n << 80n) - 1n);
    expect(low80(a)).toBe(low80(derivedId('msg', 'ten_1', 'live', `bro_1:${first}`)));
    // Derived in the order of the ids they are ordered by, they sort in it.
    expect(derivedIdOrderedBy('msg', second, 'ten_1', 'live', `bro_1:${second}`) > a).toBe(true);
  });

  it('refuses to order by something that is no id', () => {
    expect(() => derivedIdOrderedBy('msg', 'con_not-an-id!', 'ten_1')).toThrow(/no id newId made/);
  });
});
