import { describe, expect, it } from 'vitest';
import { PresenceFilter } from './presence.filter.ts';
import { newId } from './ids.ts';

describe('presence filter', () => {
  it('never answers no for a key it was given, across growth, and rarely yes for others', () => {
    const filter = new PresenceFilter(1000); // grows past its first slice several times
    const added = Array.from({ length: 300_000 }, (_, i) => `MessageActor\0${newId('msg')}${i % 3 ? '' : ':x'}`);
    for (const key of added) filter.add(key);
    expect(added.every((key) => filter.mayHave(key))).toBe(true);
    const others = Array.from({ length: 100_000 }, () => `MessageActor\0${newId('msg')}`);
    const falseYes = others.filter((key) => filter.mayHave(key)).length;
    expect(falseYes / others.length).toBeLessThan(0.05);
  });

  it('tells apart keys that differ only in type or by one character', () => {
    const filter = new PresenceFilter(10);
    filter.add('DeliveryActor\0msg_1');
    expect(filter.mayHave('DeliveryActor\0msg_1')).toBe(true);
    expect(filter.mayHave('MessageActor\0msg_1')).toBe(false);
    expect(filter.mayHave('DeliveryActor\0msg_2')).toBe(false);
  });
});
