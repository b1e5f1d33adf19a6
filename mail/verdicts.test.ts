// Verdicts of the real .eml fixtures against records on a loopback DNS server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsResolver } from '../lib/dns.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { fixture, publishSenders } from '../test/harness/inbound.harness.ts';
import { createPublicKey } from 'node:crypto';
import { verdictsOf } from './verdicts.ts';
import { keptKeys } from './dkim.keys.ts';

let dns: DnsServer;
let resolve: (name: string, type: string) => Promise<any>;
beforeAll(async () => {
  dns = await startDns();
  publishSenders(dns);
  const resolver = dnsResolver([dns.address]);
  resolve = (name, type) => resolver.resolve(name, type);
});
afterAll(() => dns.close());

const from = (mailFrom: string) => ({ ip: '127.0.0.1', helo: 'client.sender.test', mailFrom, mta: 'gatepost.test' });

describe('verdictsOf', () => {
  it('an aligned DKIM signature and SPF pass make DMARC pass under the sender policy', async () => {
    const v = await verdictsOf(fixture('aligned.eml'), from('alice@sender.test'), resolve);
    expect(v.spf).toEqual({ result: 'pass', domain: 'sender.test' });
    expect(v.dkim).toEqual([{ result: 'pass', domain: 'sender.test', selector: 's1', aligned: true }]);
    expect(v.dmarc).toMatchObject({ result: 'pass', domain: 'sender.test', policy: 'reject' });
    expect(v.arc).toEqual({ result: 'none', instance: null });
  });

  it('a valid signature of another domain passes DKIM but does not align: with SPF failing, DMARC fails', async () => {
    const v = await verdictsOf(fixture('misaligned.eml'), from('alice@fail.test'), resolve);
    expect(v.dkim).toEqual([{ result: 'pass', domain: 'other.test', selector: 's1', aligned: false }]);
    expect(v.spf).toEqual({ result: 'fail', domain: 'fail.test' });
    expect(v.dmarc).toMatchObject({ result: 'fail', domain: 'sender.test', policy: 'reject' });
  });

  // mailauth answers neutral for a body hash that does not match (RFC 6376 §6.1.3 lets a
  // verifier tell it from a bad signature); the domain still aligns, the signature does not pass.
  it('a body changed after signing does not pass DKIM; SPF softfail stays softfail', async () => {
    const v = await verdictsOf(fixture('forged.eml'), from('alice@softfail.test'), resolve);
    expect(v.dkim).toEqual([{ result: 'neutral', domain: 'sender.test', selector: 's1', aligned: true }]);
    expect(v.spf).toEqual({ result: 'softfail', domain: 'softfail.test' });
    expect(v.dmarc.result).toBe('fail');
  });

  it('an unsigned message from a domain with no SPF record: no DKIM entries, SPF none', async () => {
    const v = await verdictsOf(fixture('unsigned.eml'), from('alice@nospf.test'), resolve);
    expect(v.dkim).toEqual([]);
    expect(v.spf).toEqual({ result: 'none', domain: 'nospf.test' });
    expect(v.dmarc.result).toBe('fail');
  });

  it('the null sender is checked by its HELO name', async () => {
    const v = await verdictsOf(fixture('unsigned.eml'), { ...from(''), helo: 'sender.test' }, resolve);
    expect(v.spf).toEqual({ result: 'pass', domain: 'sender.test' });
  });
});

describe("signers' public keys (dkim.keys.ts)", () => {
  it('are parsed once per key record, and the record is asked each time: a rotated key is used at once', async () => {
    const first = await verdictsOf(fixture('aligned.eml'), from('alice@sender.test'), resolve);
    const keys = keptKeys();
    expect(keys).toBeGreaterThan(0);
    const again = await verdictsOf(fixture('aligned.eml'), from('alice@sender.test'), resolve);
    expect([first.dkim[0]?.result, again.dkim[0]?.result]).toEqual(['pass', 'pass']);
    expect(keptKeys()).toBe(keys);

    const name = 's1._domainkey.sender.test';
    const published = dns.records.get(name)!;
    const otherKey = createPublicKey(fixture('other.key.pem')).export({ format: 'der', type: 'spki' }).toString('base64');
    dns.records.set(name, { TXT: [`v=DKIM1; k=rsa; p=${otherKey}`] });
    try {
      const rotated = await verdictsOf(fixture('aligned.eml'), from('alice@sender.test'), resolve);
      expect(rotated.dkim).toEqual([{ result: 'fail', domain: 'sender.test', selector: 's1', aligned: true }]);
    } finally {
      dns.records.set(name, published);
    }
    expect((await verdictsOf(fixture('aligned.eml'), from('alice@sender.test'), resolve)).dkim[0]?.result).toBe('pass');
  });
});
