// Sending domains for tests: publish the records Gatepost asks for on the loopback DNS server
// (dns.harness.ts) and verify the domain, as a tenant would with their DNS provider.
import type { DnsAnswers, DnsServer } from './dns.harness.ts';
import type { DnsRecord, DomainView, Domains } from '../../tenancy/domains.ts';
import type { GatepostClient } from './gatepost.harness.ts';

/** The settings the tests' Gatepost publishes records for. */
export const TEST_RECORD_SETTINGS = {
  hostname: 'gatepost.test',
  spf: { include: '_spf.gatepost.test', ips: [] },
  trackingTarget: 'gatepost.test',
};

/** Adds each record to what the server answers at its name. */
export function publish(dns: DnsServer, records: readonly DnsRecord[]): void {
  for (const r of records) {
    const current = dns.records.get(r.name);
    const entry: DnsAnswers = typeof current === 'object' ? current : {};
    if (r.type === 'TXT') entry.TXT = [...(entry.TXT ?? []), r.value];
    else if (r.type === 'CNAME') entry.CNAME = r.value;
    else entry.MX = [...(entry.MX ?? []), { exchange: r.value, priority: r.priority ?? 10 }];
    dns.records.set(r.name, entry);
  }
}

/** Creates the domain, publishes its records and verifies it; throws unless it comes out verified. */
export async function verifiedDomain(domains: Domains, dns: DnsServer, tenantId: string, name: string): Promise<DomainView> {
  const created = await domains.create(tenantId, name);
  publish(dns, created.records);
  const verified = await domains.verify(tenantId, created.id);
  if (verified.status !== 'verified') throw new Error(`${name} did not verify: ${JSON.stringify(verified.records)}`);
  return verified;
}

/** The same through a running Gatepost's API, with a live key of the tenant. */
export async function verifiedDomainOver(gp: GatepostClient, dns: DnsServer, liveKey: string, name: string): Promise<DomainView> {
  const created = await gp.request<DomainView>('POST', '/v1/domains', { key: liveKey, body: { name } });
  publish(dns, created.body.records);
  const verified = await gp.request<DomainView>('POST', `/v1/domains/${created.body.id}/verify`, { key: liveKey });
  if (verified.body.status !== 'verified') throw new Error(`${name} did not verify: ${JSON.stringify(verified.body)}`);
  return verified.body;
}

/** For actors whose tests send from no verified domain: every message goes unsigned. */
export const NO_SIGNERS = { signerFor: async () => null };
