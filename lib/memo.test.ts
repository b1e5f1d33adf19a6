import { describe, expect, it } from 'vitest';
import { Memo } from './memo.ts';

describe('Memo', () => {
  it('computes a key once while it is held', () => {
    const memo = new Memo<string, number>(2);
    let calls = 0;
    const square = (k: string) => (calls++, Number(k) ** 2);
    expect(memo.get('3', square)).toBe(9);
    expect(memo.get('3', square)).toBe(9);
    expect(calls).toBe(1);
  });

  it('keeps the most recent `capacity` keys and forgets older ones', () => {
    const memo = new Memo<number, number>(3);
    const computed: number[] = [];
    const id = (k: number) => (computed.push(k), k);
    for (let k = 0; k < 10; k++) memo.get(k, id);
    computed.length = 0;
    // The last three are held, whatever the generation they are in.
    for (const k of [7, 8, 9]) memo.get(k, id);
    expect(computed).toEqual([]);
    memo.get(0, id);
    expect(computed).toEqual([0]);
  });

  it('remembers null and undefined results', () => {
    const memo = new Memo<string, null | undefined>(4);
    let calls = 0;
    for (let i = 0; i < 3; i++) memo.get('a', () => (calls++, null));
    for (let i = 0; i < 3; i++) memo.get('b', () => (calls++, undefined));
    expect(calls).toBe(2);
  });
});
