// Sending domains against a real DNS server on loopback: the records a new domain asks for,
// verification record by record, and what a verified domain gives the gate and the signer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createPublicKey } from 'node:crypto';
import { GatepostError } from '../errors/errors.catalog.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { TEST_RECORD_SETTINGS, publish } from '../test/harness/domains.harness.ts';
import { tempDir } from '../test/harness/gatepost.harness.ts';
import { Domains, domainName, selectorsFor } from './domains.ts';

let dns: DnsServer;
let catalog: SqliteCatalog;
let domains: Domains;
let n = 0;
const tenant = async () =>
  (await catalog.createTenant({ id: `ten_${++n}`, name: 'T', default_from: null, quota: { per_second: null, per_day: null } }))
    .id;

beforeAll(async () => {
  dns = await startDns();
  catalog = new SqliteCatalog(join(tempDir('domains'), 'catalog.db'));
  domains = new Domains(catalog, { ...TEST_RECORD_SETTINGS, dnsServers: [dns.address] });
});
afterAll(async () => {
  await catalog.close();
  await dns.close();
});

describe('domain names', () => {
  it('stores names lower case, without a trailing dot, international ones as A-labels', () => {
    expect(domainName(' Example.COM. ')).toBe('example.com');
    expect(domainName('bücher.example')).toBe('xn--bcher-kva.example');
    expect(domainName('mail.xn--bcher-kva.example')).toBe('mail.xn--bcher-kva.example');
  });

  it('refuses what is not a domain name', () => {
    for (const bad of [
      '',
      'localhost',
      'example',
      '127.0.0.1',
      'a@example.com',
      'http://example.com',
      'exa mple.com',
      '-a.example.com',
      `${'a'.repeat(64)}.com`,
      'example.123',
    ])
      expect(domainName(bad), bad).toBeNull();
  });

  it('names selectors by the month the keys were made', () => {
    expect(selectorsFor(new Date('2026-03-05T00:00:00Z'))).toEqual({ rsa: 'gp202603r', ed25519: 'gp202603e' });
  });
});

describe('sending domains', () => {
  it('asks for two DKIM keys, SPF, DMARC, the return path and the inbound MX, and hides the private keys', async () => {
    const t = await tenant();
    const d = await domains.create(t, 'Shop.Example.com');
    const { rsa, ed25519 } = selectorsFor(new Date());
    expect(d).toMatchObject({ id: expect.stringMatching(/^dom_/), name: 'shop.example.com', status: 'pending' });
    expect(d.records.map(({ purpose, type, name, required, status }) => ({ purpose, type, name, required, status }))).toEqual([
      { purpose: 'dkim', type: 'TXT', name: `${rsa}._domainkey.shop.example.com`, required: true, status: 'pending' },
      { purpose: 'dkim', type: 'TXT', name: `${ed25519}._domainkey.shop.example.com`, required: true, status: 'pending' },
      { purpose: 'spf', type: 'TXT', name: 'shop.example.com', required: true, status: 'pending' },
      { purpose: 'dmarc', type: 'TXT', name: '_dmarc.shop.example.com', required: false, status: 'pending' },
      { purpose: 'return_path', type: 'MX', name: 'bounces.shop.example.com', required: false, status: 'pending' },
      { purpose: 'inbound_mx', type: 'MX', name: 'shop.example.com', required: false, status: 'pending' },
    ]);
    const [rsaRecord, edRecord, spf, dmarc, returnPath] = d.records;
    // The p= values are real keys: RSA-2048 as SubjectPublicKeyInfo, Ed25519 as its raw 32 bytes (RFC 8463).
    const rsaKey = createPublicKey({ key: Buffer.from(rsaRecord!.value.split('p=')[1]!, 'base64'), format: 'der', type: 'spki' });
    expect(rsaRecord!.value).toMatch(/^v=DKIM1; k=rsa; p=/);
    expect(rsaKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(edRecord!.value).toMatch(/^v=DKIM1; k=ed25519; p=/);
    expect(Buffer.from(edRecord!.value.split('p=')[1]!, 'base64')).toHaveLength(32);
    expect(spf!.value).toBe('v=spf1 include:_spf.gatepost.test ~all');
    expect(dmarc!.value).toMatch(/^v=DMARC1; p=none/);
    expect(returnPath).toMatchObject({ value: 'gatepost.test', priority: 10 });
    expect(JSON.stringify(d)).not.toContain('PRIVATE KEY');
    expect(JSON.stringify(await domains.list(t))).not.toContain('PRIVATE KEY');
  });

  it('says per record what verification found, and verifies once DKIM and SPF are published', async () => {
    const t = await tenant();
    const d = await domains.create(t, 'verify.example.com');
    const nothing = await domains.verify(t, d.id);
    expect(nothing.status).toBe('pending');
    expect(nothing.records.every((r) => r.status === 'failed' && r.found!.length === 0 && r.error === 'ENOTFOUND')).toBe(true);

    // DKIM alone is not enough; a wrong SPF is found and reported as it is.
    publish(
      dns,
      d.records.filter((r) => r.purpose === 'dkim'),
    );
    dns.records.set('verify.example.com', { TXT: ['v=spf1 include:_spf.other.test ~all', 'google-site-verification=abc'] });
    const noSpf = await domains.verify(t, d.id);
    expect(noSpf.status).toBe('pending');
    expect(noSpf.records.find((r) => r.purpose === 'spf')).toMatchObject({
      status: 'failed',
      found: ['v=spf1 include:_spf.other.test ~all', 'google-site-verification=abc'],
      error: null,
    });
    expect(noSpf.records.filter((r) => r.purpose === 'dkim').map((r) => r.status)).toEqual(['verified', 'verified']);
    expect(await domains.isVerified(t, 'verify.example.com')).toBe(false);
    expect(await domains.signerFor(t, 'verify.example.com')).toBeNull();

    // The tenant's own SPF, with Gatepost's include among its terms; DMARC and the MX still missing.
    dns.records.set('verify.example.com', { TXT: ['v=spf1 mx include:_spf.gatepost.test -all'] });
    const verified = await domains.verify(t, d.id);
    expect(verified).toMatchObject({ status: 'verified', verified_at: expect.any(String) });
    expect(
      Object.fromEntries(verified.records.map((r) => [r.purpose + (r.purpose === 'dkim' ? r.name.slice(8, 9) : ''), r.status])),
    ).toEqual({
      dkimr: 'verified',
      dkime: 'verified',
      spf: 'verified',
      dmarc: 'failed',
      return_path: 'failed',
      inbound_mx: 'failed',
    });
    expect(await domains.isVerified(t, 'verify.example.com')).toBe(true);
    const signer = await domains.signerFor(t, 'VERIFY.example.com');
    expect(signer).toMatchObject({
      domain: 'verify.example.com',
      rsa: { selector: d.records[0]!.name.split('.')[0] },
      ed25519: { selector: d.records[1]!.name.split('.')[0] },
    });
    expect([signer!.rsa.privateKey.asymmetricKeyType, signer!.ed25519.privateKey.asymmetricKeyType]).toEqual(['rsa', 'ed25519']);
    expect(await domains.isVerified(await tenant(), 'verify.example.com')).toBe(false);

    // Two SPF records are an SPF permerror (RFC 7208 §4.5): the domain falls back to pending.
    dns.records.set('verify.example.com', { TXT: ['v=spf1 include:_spf.gatepost.test ~all', 'v=spf1 -all'] });
    expect((await domains.verify(t, d.id)).status).toBe('pending');
    expect(await domains.isVerified(t, 'verify.example.com')).toBe(false);
    expect(await domains.signerFor(t, 'verify.example.com')).toBeNull();
  });

  it('refuses a name another tenant verified; forgets a deleted domain at once', async () => {
    const [a, b] = [await tenant(), await tenant()];
    const ours = await domains.create(a, 'owned.example.com');
    const theirs = await domains.create(b, 'owned.example.com');
    publish(
      dns,
      ours.records.filter((r) => r.purpose === 'dkim'),
    );
    dns.records.set('owned.example.com', { TXT: ['v=spf1 include:_spf.gatepost.test ~all'] });
    publish(
      dns,
      theirs.records.filter((r) => r.purpose === 'dkim'),
    );
    expect((await domains.verify(a, ours.id)).status).toBe('verified');
    await expect(domains.verify(b, theirs.id)).rejects.toMatchObject({ code: 'domain_taken' });
    await expect(domains.create(await tenant(), 'owned.example.com')).rejects.toMatchObject({ code: 'domain_taken' });
    await expect(domains.create(a, 'OWNED.example.com.')).rejects.toMatchObject({ code: 'domain_exists' });

    expect(await domains.isVerified(a, 'owned.example.com')).toBe(true);
    await domains.delete(a, ours.id);
    expect(await domains.isVerified(a, 'owned.example.com')).toBe(false);
    expect(await domains.signerFor(a, 'owned.example.com')).toBeNull();
    await expect(domains.get(a, ours.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(domains.delete(a, ours.id)).rejects.toMatchObject({ code: 'not_found' });
    expect((await domains.verify(b, theirs.id)).status).toBe('verified');
  });

  it('refuses a name that is not a domain with a coded 400', async () => {
    const error = await domains.create(await tenant(), 'not a domain').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatepostError);
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, details: [{ field: 'name' }] });
  });
});

describe('tracking hosts', () => {
  it('asks for a CNAME to Gatepost, checks it, and gives mail from the domain its links only once it is found', async () => {
    const t = await tenant();
    const d = await domains.create(t, 'links.example.com', 'Track.Links.example.com.');
    expect(d.tracking_host).toBe('track.links.example.com');
    const cname = d.records.find((r) => r.purpose === 'tracking');
    expect(cname).toMatchObject({
      type: 'CNAME',
      name: 'track.links.example.com',
      value: 'gatepost.test',
      required: false,
      status: 'pending',
    });
    publish(
      dns,
      d.records.filter((r) => r.purpose !== 'tracking'),
    );
    const verified = await domains.verify(t, d.id);
    expect(verified.status).toBe('verified');
    expect(verified.records.find((r) => r.purpose === 'tracking')).toMatchObject({ status: 'failed', error: 'ENOTFOUND' });
    expect(await domains.linkHostsFor(t, 'links.example.com')).toEqual({
      tracking_host: null,
      return_path: 'bounces.links.example.com',
    });

    dns.records.set('track.links.example.com', { CNAME: 'elsewhere.test' });
    expect((await domains.verify(t, d.id)).records.find((r) => r.purpose === 'tracking')).toMatchObject({
      status: 'failed',
      found: ['elsewhere.test'],
    });
    publish(dns, [cname!]);
    const found = await domains.verify(t, d.id);
    expect(found.records.find((r) => r.purpose === 'tracking')).toMatchObject({ status: 'verified', found: ['gatepost.test'] });
    expect(await domains.linkHostsFor(t, 'LINKS.example.com')).toEqual({
      tracking_host: 'track.links.example.com',
      return_path: 'bounces.links.example.com',
    });
    // Another tenant's mail from the name, and mail from any other domain, get neither.
    expect(await domains.linkHostsFor(await tenant(), 'links.example.com')).toEqual({ tracking_host: null, return_path: null });
    expect(await domains.linkHostsFor(t, 'other.example.com')).toEqual({ tracking_host: null, return_path: null });
  });

  it('changes and clears the tracking host; a new one is pending until the next verification', async () => {
    const t = await tenant();
    const d = await domains.create(t, 'switch.example.com');
    expect(d.tracking_host).toBeNull();
    expect(d.records.some((r) => r.purpose === 'tracking')).toBe(false);
    const named = await domains.setTrackingHost(t, d.id, 'click.switch.example.com');
    expect(named.records.find((r) => r.purpose === 'tracking')).toMatchObject({
      name: 'click.switch.example.com',
      status: 'pending',
    });
    const cleared = await domains.setTrackingHost(t, d.id, null);
    expect(cleared.tracking_host).toBeNull();
    expect(cleared.records.some((r) => r.purpose === 'tracking')).toBe(false);
    await expect(domains.setTrackingHost(await tenant(), d.id, null)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses a tracking host that is no host name under the domain with a coded 422', async () => {
    const t = await tenant();
    const d = await domains.create(t, 'strict.example.com');
    for (const bad of [
      'strict.example.com',
      'track.other.example.com',
      'notstrict.example.com',
      'not a host',
      'http://track.strict.example.com',
      '',
    ])
      await expect(domains.setTrackingHost(t, d.id, bad), bad).rejects.toMatchObject({
        code: 'tracking_host_invalid',
        status: 422,
        details: [{ field: 'tracking_host' }],
      });
    await expect(domains.create(t, 'other-strict.example.com', 'track.example.com')).rejects.toMatchObject({
      code: 'tracking_host_invalid',
    });
    expect((await domains.list(t)).map((x) => x.name)).toEqual(['strict.example.com']);
  });
});
