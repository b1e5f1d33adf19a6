import { describe, expect, it } from 'vitest';
import { newId } from '../lib/ids.ts';
import { parseVerp, returnPathDomain, verpAddress } from './verp.ts';

describe('VERP return-paths', () => {
  it('names the message on the bounce subdomain, and reads it back', () => {
    const id = newId('msg');
    const address = verpAddress(id, returnPathDomain('Example.COM'));
    expect(address).toBe(`b+${id}@bounces.example.com`);
    expect(parseVerp(address)).toEqual({ messageId: id, domain: 'bounces.example.com' });
  });

  it('reads an address a remote server folded to upper case', () => {
    const id = newId('msg');
    expect(parseVerp(verpAddress(id, 'bounces.example.com').toUpperCase())).toEqual({
      messageId: id,
      domain: 'bounces.example.com',
    });
  });

  it('refuses what is not a VERP address', () => {
    for (const address of [
      'ann@example.com',
      'b+msg_@x.example',
      'b+evt_1@x.example',
      'b+msg_1',
      'b+msg_1@',
      'x+msg_1@x.example',
    ]) {
      expect(parseVerp(address), address).toBeNull();
    }
    expect(() => verpAddress('evt_1', 'bounces.example.com')).toThrow();
  });
});
