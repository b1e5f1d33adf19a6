// One DNS resolver for every look-up Gatepost makes (webhook hosts, MX, DKIM/SPF/DMARC records):
// the servers of GATEPOST_DNS_SERVERS when given (`ip` or `ip:port`, which tests point at a
// loopback server), the system's otherwise.
import { Resolver } from 'node:dns/promises';

export function dnsResolver(servers: readonly string[] | null | undefined, timeoutMs = 3000): Resolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers && servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}
