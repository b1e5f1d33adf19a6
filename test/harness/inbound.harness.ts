// The senders of the inbound fixtures (ingress/inbound/fixtures/): their DKIM keys, SPF and DMARC
// records on the loopback DNS server (dns.harness.ts), as a sender's DNS provider would publish them.
// The client address of every test connection is 127.0.0.1, so each SPF policy is written for it.
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DnsServer } from './dns.harness.ts';

export const fixture = (name: string): Buffer => readFileSync(new URL(`../../ingress/inbound/fixtures/${name}`, import.meta.url));

const publicKeyOf = (name: string) =>
  createPublicKey(fixture(`${name}.key.pem`))
    .export({ format: 'der', type: 'spki' })
    .toString('base64');

/**
 * sender.test signs with s1 and lets 127.0.0.1 send (DMARC p=reject); other.test signs with s1 too;
 * softfail.test and fail.test do not authorise 127.0.0.1 (~all and -all); nospf.test publishes nothing.
 */
export function publishSenders(dns: DnsServer): void {
  dns.records.set('s1._domainkey.sender.test', { TXT: [`v=DKIM1; k=rsa; p=${publicKeyOf('sender')}`] });
  dns.records.set('s1._domainkey.other.test', { TXT: [`v=DKIM1; k=rsa; p=${publicKeyOf('other')}`] });
  dns.records.set('sender.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.records.set('_dmarc.sender.test', { TXT: ['v=DMARC1; p=reject; adkim=r; aspf=r'] });
  dns.records.set('other.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.records.set('softfail.test', { TXT: ['v=spf1 ip4:192.0.2.1 ~all'] });
  dns.records.set('fail.test', { TXT: ['v=spf1 ip4:192.0.2.1 -all'] });
}
