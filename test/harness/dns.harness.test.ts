// The DNS harness as a resolver meets it: node:dns's Resolver, pointed at it, reads each record
// type the tests serve, sees a change at once, and gets NXDOMAIN for a name it does not hold.
import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDns, type DnsServer } from './dns.harness.ts';

describe('the DNS harness', () => {
  let dns: DnsServer;
  let resolver: Resolver;
  const longTxt = `v=DKIM1; k=rsa; p=${'A'.repeat(400)}`;

  beforeAll(async () => {
    dns = await startDns({
      'mail.example.test': {
        A: ['192.0.2.10', '192.0.2.11'],
        AAAA: ['2001:db8::10'],
        MX: [
          { exchange: 'mx1.example.test', priority: 10 },
          { exchange: 'mx2.example.test', priority: 20 },
        ],
        TXT: ['v=spf1 ip4:192.0.2.0/24 -all', longTxt],
      },
    });
    resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([dns.address]);
  });
  afterAll(() => dns.close());

  it('answers A, AAAA, MX and TXT', async () => {
    expect((await resolver.resolve4('mail.example.test')).sort()).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(await resolver.resolve6('mail.example.test')).toEqual(['2001:db8::10']);
    expect((await resolver.resolveMx('mail.example.test')).sort((a, b) => a.priority - b.priority)).toEqual([
      { exchange: 'mx1.example.test', priority: 10 },
      { exchange: 'mx2.example.test', priority: 20 },
    ]);
    // A TXT record longer than 255 bytes arrives in pieces, which the reader joins.
    const txt = (await resolver.resolveTxt('mail.example.test')).map((strings) => strings.join(''));
    expect(txt.sort()).toEqual(['v=spf1 ip4:192.0.2.0/24 -all', longTxt].sort());
    expect(dns.queries).toEqual(expect.arrayContaining(['mail.example.test A', 'mail.example.test MX', 'mail.example.test TXT']));
  });

  it('answers a changed record at once, no records for a type a name lacks, NXDOMAIN for an unknown name', async () => {
    dns.records.set('moving.example.test', { A: ['192.0.2.1'] });
    expect(await resolver.resolve4('moving.example.test')).toEqual(['192.0.2.1']);
    dns.records.set('moving.example.test', () => ({ A: ['192.0.2.2'] }));
    expect(await resolver.resolve4('moving.example.test')).toEqual(['192.0.2.2']);
    await expect(resolver.resolveMx('moving.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolve4('unknown.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
