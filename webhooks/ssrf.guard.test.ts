// The SSRF guard: every form of a non-public address is refused, public ones pass, host names
// are judged by every address they resolve to (through a real DNS server on loopback), and
// GATEPOST_WEBHOOK_ALLOW opens exactly the networks it names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { embeddedIPv4, nonPublicReason, SsrfGuard } from './ssrf.guard.ts';

let dns: DnsServer;
beforeAll(async () => {
  dns = await startDns({
    'public.test': { A: ['93.184.215.14'], AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'] },
    'internal.test': { A: ['10.1.2.3'] },
    'mixed.test': { A: ['93.184.215.14', '192.168.1.1'] },
    'v6private.test': { AAAA: ['fd12::1'] },
    'mapped.test': { AAAA: ['::ffff:127.0.0.1'] },
    'metadata.test': { A: ['169.254.169.254'] },
    'loop.test': { A: ['127.0.0.1'] },
    'empty.test': {},
  });
});
afterAll(() => dns.close());

const guard = (opts: ConstructorParameters<typeof SsrfGuard>[0] = {}) => new SsrfGuard({ dnsServers: [dns.address], ...opts });

async function refusal(g: SsrfGuard, url: string): Promise<string> {
  const error = await g.check(url).then(
    () => null,
    (e: { code?: string; message: string }) => e,
  );
  expect(error, `${url} should be refused`).not.toBeNull();
  expect(error!.code).toBe('webhook_url_refused');
  return error!.message;
}

describe('nonPublicReason', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['192.0.0.8', 'IETF'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'IPv4-mapped form of 127.0.0.1, which is loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped form of 127.0.0.1'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', '169.254.169.254, which is link-local'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::a00:1', 'IPv4-compatible form of 10.0.0.1'],
    ['64:ff9b::10.0.0.1', 'NAT64 form of 10.0.0.1, which is private'],
    ['64:ff9b::7f00:1', 'NAT64 form of 127.0.0.1, which is loopback'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:7f00:1::', '6to4 form of 127.0.0.1'],
    ['2002:c0a8:101::1', '6to4 form of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'reserved'],
    ['::2', 'IPv4-compatible'],
    ['fe80::1%eth0', 'zone'],
  ])('%s is %s', (ip, why) => {
    expect(nonPublicReason(ip)).toContain(why);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (ip) => {
    expect(nonPublicReason(ip)).toBeNull();
  });

  it('reads IPv6 in every textual form', () => {
    expect(embeddedIPv4('::ffff:1.2.3.4')).toEqual({ v4: '1.2.3.4', form: 'IPv4-mapped' });
    expect(embeddedIPv4('::ffff:0102:0304')).toEqual({ v4: '1.2.3.4', form: 'IPv4-mapped' });
    expect(embeddedIPv4('0:0:0:0:0:ffff:1.2.3.4')).toEqual({ v4: '1.2.3.4', form: 'IPv4-mapped' });
    expect(embeddedIPv4('2002:0102:0304::')).toEqual({ v4: '1.2.3.4', form: '6to4' });
    expect(embeddedIPv4('1::')).toBeNull();
    expect(embeddedIPv4('1:2:3:4:5:6:7:8')).toBeNull();
    expect(embeddedIPv4('64:ff9b::c000:221')).toEqual({ v4: '192.0.2.33', form: 'NAT64' });
    expect(embeddedIPv4('2606:4700::1111')).toBeNull();
  });
});

describe('SsrfGuard.check', () => {
  it('refuses every spelling of a non-public literal (the URL parser canonicalises decimal, octal and hex)', async () => {
    const g = guard();
    for (const url of [
      'https://10.0.0.1/hook',
      'https://127.0.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:7f00:1]/',
      'https://[64:ff9b::127.0.0.1]/',
      'https://2130706433/', // decimal 127.0.0.1
      'https://017700000001/', // octal
      'https://0x7f000001/', // hex
      'https://0x7f.1/',
      'https://127.1/',
      'https://0/',
      'https://167772161/', // decimal 10.0.0.1
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://100.100.100.200/',
    ]) {
      await refusal(g, url);
    }
    expect(await refusal(g, 'https://2130706433/')).toContain('127.0.0.1 is loopback');
  });

  it('refuses http, other schemes and things that are not URLs', async () => {
    const g = guard();
    expect(await refusal(g, 'http://public.test/')).toContain('must be https');
    expect(await refusal(g, 'ftp://public.test/')).toContain('scheme');
    expect(await refusal(g, 'file:///etc/passwd')).toContain('scheme');
    expect(await refusal(g, 'not a url')).toContain('not a URL');
  });

  it('judges a host name by every address it resolves to', async () => {
    const g = guard();
    const ok = await g.check('https://public.test/hooks?x=1');
    expect(ok.host).toBe('public.test');
    expect(ok.addresses).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    expect(await refusal(g, 'https://internal.test/')).toBe(
      'The webhook URL https://internal.test/ is refused: internal.test resolves to 10.1.2.3, which is private (RFC 1918).',
    );
    expect(await refusal(g, 'https://mixed.test/')).toContain('192.168.1.1');
    expect(await refusal(g, 'https://v6private.test/')).toContain('unique local');
    expect(await refusal(g, 'https://mapped.test/')).toContain('IPv4-mapped');
    expect(await refusal(g, 'https://metadata.test/')).toContain('cloud metadata');
    expect(await refusal(g, 'https://empty.test/')).toContain('does not resolve');
    expect(await refusal(g, 'https://nowhere.test/')).toContain('does not resolve');
  });

  it('lets GATEPOST_WEBHOOK_ALLOW networks through, with http, and nothing else', async () => {
    const g = guard({ allow: ['127.0.0.0/8', '::1'] });
    expect((await g.check('http://127.0.0.1:8080/')).addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect((await g.check('https://[::1]:8443/')).addresses).toEqual([{ address: '::1', family: 6 }]);
    expect((await g.check('https://[::ffff:127.0.0.1]/')).addresses).toEqual([{ address: '::ffff:7f00:1', family: 6 }]);
    expect((await g.check('http://loop.test:9/')).addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
    await refusal(g, 'https://10.0.0.1/');
    await refusal(g, 'https://[64:ff9b::127.0.0.1]/');
    expect(await refusal(g, 'http://public.test/')).toContain('must be https');
    // Metadata addresses stay refused whatever is allowed.
    expect(await refusal(guard({ allow: ['169.254.0.0/16'] }), 'https://169.254.169.254/')).toContain('metadata');
    expect(() => new SsrfGuard({ allow: ['not-a-network'] })).toThrow(/GATEPOST_WEBHOOK_ALLOW/);
  });

  it("refuses Gatepost's own ports on this machine even where loopback is allowed", async () => {
    const g = guard({ allow: ['127.0.0.0/8', '::1'] });
    g.protectPorts(3000);
    expect(await refusal(g, 'http://127.0.0.1:3000/v1/admin/tenants')).toContain("Gatepost's own service");
    expect(await refusal(g, 'http://[::ffff:127.0.0.1]:3000/')).toContain("Gatepost's own service");
    expect(await refusal(g, 'http://loop.test:3000/')).toContain("Gatepost's own service");
    await g.check('http://127.0.0.1:3001/');
  });
});
