import { describe, expect, it } from 'vitest';
import { derivedId, newId } from './ids.ts';

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
