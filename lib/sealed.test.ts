// Sealing secrets at rest: AES-256-GCM under the current key, old keys still open, no key no change.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyId, keySealer, parseKey, plainSealer } from './sealed.ts';

describe('sealed secrets', () => {
  const current = randomBytes(32);
  const old = randomBytes(32);

  it('seals under the current key, naming it, and opens what it sealed', () => {
    const sealer = keySealer(current);
    const stored = sealer.seal('whsec_abc', 'webhooks.secret:whk_1');
    expect(stored).toMatch(new RegExp(`^sealed:v1:${keyId(current)}:[\\w-]+:[\\w-]+:[\\w-]+$`));
    expect(stored).not.toContain('whsec_abc');
    expect(sealer.seal('whsec_abc', 'webhooks.secret:whk_1')).not.toBe(stored); // a fresh IV each time
    expect(sealer.open(stored, 'webhooks.secret:whk_1')).toBe('whsec_abc');
  });

  it('opens values sealed under an old key, and refuses a key it does not have', () => {
    const stored = keySealer(old).seal('whsec_old', 'c');
    expect(keySealer(current, [old]).open(stored, 'c')).toBe('whsec_old');
    expect(() => keySealer(current).open(stored, 'c')).toThrow(new RegExp(`key ${keyId(old)}`));
  });

  it('refuses a sealed value moved to another row or column, or altered', () => {
    const sealer = keySealer(current);
    const stored = sealer.seal('whsec_abc', 'webhooks.secret:whk_1');
    expect(() => sealer.open(stored, 'webhooks.secret:whk_2')).toThrow();
    // One character of the tag changed (the third from the end: all six of its bits are the tag's).
    const altered = stored.slice(0, -3) + (stored.at(-3) === 'A' ? 'B' : 'A') + stored.slice(-2);
    expect(() => sealer.open(altered, 'webhooks.secret:whk_1')).toThrow();
  });

  it('reads values stored before a key was set; without a key stores plain and refuses sealed values', () => {
    expect(keySealer(current).open('whsec_plain', 'c')).toBe('whsec_plain');
    expect(plainSealer.seal('whsec_x', 'c')).toBe('whsec_x');
    expect(() => plainSealer.open(keySealer(current).seal('whsec_x', 'c'), 'c')).toThrow(/GATEPOST_ENCRYPTION_KEY is not set/);
  });

  it('takes a key as 64 hex digits or base64 of 32 bytes, and nothing else', () => {
    expect(parseKey('K', current.toString('hex'))).toEqual(current);
    expect(parseKey('K', current.toString('base64'))).toEqual(current);
    for (const bad of ['short', randomBytes(16).toString('base64'), 'x'.repeat(64)])
      expect(() => parseKey('K', bad), bad).toThrow(/K must be 32/);
  });
});
