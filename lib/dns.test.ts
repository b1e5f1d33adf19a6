// What keptRecords keeps: the questions a DNS server on loopback was asked say which answers came
// from the cache.
import { afterEach, describe, expect, it } from 'vitest';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { dnsResolver, keptRecords } from './dns.ts';

let dns: DnsServer | undefined;
afterEach(async () => {
  await dns?.close();
  dns = undefined;
});

describe('keptRecords', () => {
  it('asks once per name and type, concurrent and repeated questions alike, and keeps "no such domain" too', async () => {
    dns = await startDns({ 'news.test': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] } });
    const lookups = dnsResolver([dns.address]);
    const ask = keptRecords((name, type) => lookups.resolve(name, type));
    const [a, b] = await Promise.all([ask('news.test', 'TXT'), ask('NEWS.test', 'TXT')]);
    expect(a).toEqual([['v=spf1 ip4:192.0.2.1 -all']]);
    expect(b).toEqual(a);
    expect(await ask('news.test', 'TXT')).toEqual(a);
    await expect(ask('_dmarc.news.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(ask('_dmarc.news.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect([...dns.queries].sort()).toEqual(['_dmarc.news.test TXT', 'news.test TXT']);
  });

  it('asks again after a server that could not answer', async () => {
    const answers: (() => Promise<string[]>)[] = [
      () => Promise.reject(Object.assign(new Error('queryTxt ESERVFAIL news.test'), { code: 'ESERVFAIL' })),
      () => Promise.resolve(['found']),
    ];
    const ask = keptRecords(() => answers.shift()!());
    await expect(ask('news.test', 'TXT')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    expect(await ask('news.test', 'TXT')).toEqual(['found']);
    expect(await ask('news.test', 'TXT')).toEqual(['found']);
    expect(answers).toHaveLength(0);
  });
});
