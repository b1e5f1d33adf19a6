import { describe, expect, it } from 'vitest';
import { Fifo } from './fifo.ts';

describe('Fifo', () => {
  it('gives items back in order across compactions', () => {
    const q = new Fifo<number>();
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      q.push(i);
      if (i % 3 === 0) out.push(q.shift()!);
    }
    expect(q.length).toBe(5000 - out.length);
    while (q.length > 0) out.push(q.shift()!);
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(q.shift()).toBeUndefined();
  });
});
