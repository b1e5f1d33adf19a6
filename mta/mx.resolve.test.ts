// Where a domain's mail goes, asked of a DNS server on loopback, and what the caching resolver
// keeps of it: the questions the server was asked say which answers came from the cache.
import { afterEach, describe, expect, it } from 'vitest';
import { dnsResolver } from '../lib/dns.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { CachingMxResolver } from './mx.resolve.ts';

let dns: DnsServer | undefined;
afterEach(async () => {
  await dns?.close();
  dns = undefined;
});

const records = {
  'mail.test': { MX: [{ exchange: 'mx.mail.test', priority: 10 }] },
  'mx.mail.test': { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] },
};

describe('CachingMxResolver', () => {
  it('asks once for a route and the addresses of its host while their TTLs last, concurrent questions included', async () => {
    dns = await startDns(records, { ttl: 300 });
    const cache = new CachingMxResolver(dnsResolver([dns.address]));
    const [a, b] = await Promise.all([cache.route('mail.test'), cache.route('MAIL.test')]);
    expect(a).toEqual({ implicit: false, hosts: [{ name: 'mx.mail.test', preference: 10 }] });
    expect(b).toEqual(a);
    expect(await cache.addressesOf('mx.mail.test')).toEqual(['192.0.2.10', '2001:db8::10']);
    expect(await cache.addressesOf('mx.mail.test')).toEqual(['192.0.2.10', '2001:db8::10']);
    expect(await cache.route('mail.test')).toEqual(a);
    expect([...dns.queries].sort()).toEqual(['mail.test MX', 'mx.mail.test A', 'mx.mail.test AAAA']);
  });

  it('keeps no address past its TTL (0: asked again every time), and no failure', async () => {
    dns = await startDns(records);
    const cache = new CachingMxResolver(dnsResolver([dns.address]));
    await cache.addressesOf('mx.mail.test');
    dns.records.set('mx.mail.test', { A: ['192.0.2.11'] });
    expect(await cache.addressesOf('mx.mail.test')).toEqual(['192.0.2.11']);

    expect(await cache.route('nowhere.test')).toMatchObject({ failure: 'permanent' });
    dns.records.set('nowhere.test', { MX: [{ exchange: 'mx.mail.test', priority: 5 }] });
    expect(await cache.route('nowhere.test')).toEqual({ implicit: false, hosts: [{ name: 'mx.mail.test', preference: 5 }] });
    expect(dns.queries.filter((q) => q === 'nowhere.test MX')).toHaveLength(2);
  });
});
