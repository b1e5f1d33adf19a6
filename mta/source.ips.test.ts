import { describe, expect, it } from 'vitest';
import { assertLocalAddresses, sourceOrder } from './source.ips.ts';

describe('sourceOrder', () => {
  const ips = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];

  it('tries every address once, from one picked by the message, and starts one on at the next attempt', () => {
    const first = sourceOrder(ips, 'msg_a', 1);
    expect([...first].sort()).toEqual(ips);
    const start = ips.indexOf(first[0]!);
    expect(first).toEqual([0, 1, 2].map((i) => ips[(start + i) % 3]));
    expect(sourceOrder(ips, 'msg_a', 2)[0]).toBe(ips[(start + 1) % 3]);
  });

  it('spreads messages over the addresses', () => {
    const firsts = new Set(Array.from({ length: 30 }, (_, i) => sourceOrder(ips, `msg_${i}`, 1)[0]));
    expect(firsts).toEqual(new Set(ips));
  });
});

describe('assertLocalAddresses', () => {
  it('takes addresses of this machine and names the first that is not one', async () => {
    await expect(assertLocalAddresses(['127.0.0.2', '127.0.0.3'])).resolves.toBeUndefined();
    // TEST-NET-1 (RFC 5737): no machine has it.
    await expect(assertLocalAddresses(['127.0.0.2', '192.0.2.77'])).rejects.toThrow(
      'GATEPOST_SOURCE_IPS: 192.0.2.77 is not an address of this machine',
    );
  });
});
