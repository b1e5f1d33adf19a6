// The senders of the inbound fixtures (ingress/inbound/fixtures/): their DKIM keys, SPF and DMARC
// records on the loopback DNS server (dns.harness.ts), as a sender's DNS provider would publish them.
// The client address of every test connection is 127.0.0.1, so each SPF policy is written for it.
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import type { DnsServer } from './dns.harness.ts';
import { verifiedDomainOver } from './domains.harness.ts';
import type { GatepostProcess } from './gatepost.harness.ts';

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

/** A received message the tests can read back: its id, and the bytes sent to the inbound MX. */
export interface ReceivedInbound {
  id: string;
  /** The fixture file sent, byte for byte (a language test compares its download with it). */
  path: string;
  raw: Buffer;
}

/**
 * Verifies `domain` for the tenant of `liveKey` with its inbound MX record on `dns`, routes
 * `support@<domain>` to be kept, and sends aligned.eml there with a real SMTP client: the message
 * as the inbound MX took it. aligned.eml has one attachment, receipt.txt (text/plain,
 * "Order 1042, paid.\n").
 */
export async function receiveInbound(
  gp: GatepostProcess,
  dns: DnsServer,
  liveKey: string,
  domain: string,
): Promise<ReceivedInbound> {
  await verifiedDomainOver(gp, dns, liveKey, domain);
  const route = await gp.request('POST', '/v1/inbound/routes', {
    key: liveKey,
    body: { match: `support@${domain}`, action: 'store' },
  });
  if (route.status !== 201) throw new Error(`inbound route: ${route.status} ${JSON.stringify(route.body)}`);
  const path = fileURLToPath(new URL('../../ingress/inbound/fixtures/aligned.eml', import.meta.url));
  const raw = await readFile(path);
  const sent = await nodemailer
    .createTransport({
      host: '127.0.0.1',
      port: gp.inboundPort,
      secure: false,
      name: 'client.sender.test',
      tls: { rejectUnauthorized: false },
    })
    .sendMail({ envelope: { from: 'alice@sender.test', to: [`support@${domain}`] }, raw });
  const id = /\((inm_\w+)\)/.exec(sent.response)?.[1];
  if (!id) throw new Error(`the inbound MX answered no message id: ${sent.response}`);
  return { id, path, raw };
}
