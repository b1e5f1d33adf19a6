// The mailbox provider behind a recipient domain, named by its first MX host (docs/deliverability.md,
// "A share per provider"): the big ones by the names their MX hosts go by, whatever the recipient
// domain (a company's own domain on Google Workspace is google); any other by its MX host's last
// two labels (mx1.mail.example.net: example.net), close enough to the registered domain for
// grouping the hosts of one operator, though a name under a two-label suffix (mx.isp.co.uk) groups
// by that suffix.
import type { CachingMxResolver } from './mx.resolve.ts';

const KNOWN: [suffix: string, provider: string][] = [
  ['google.com', 'google'],
  ['googlemail.com', 'google'],
  ['outlook.com', 'microsoft'],
  ['hotmail.com', 'microsoft'],
  ['yahoodns.net', 'yahoo'],
  ['yahoo.com', 'yahoo'],
  ['icloud.com', 'apple'],
  ['me.com', 'apple'],
  ['mac.com', 'apple'],
];

/** The provider an MX host's name says. */
export function providerOfHost(host: string): string {
  const name = host.toLowerCase().replace(/\.$/, '');
  for (const [suffix, provider] of KNOWN) if (name === suffix || name.endsWith(`.${suffix}`)) return provider;
  return name.split('.').slice(-2).join('.');
}

/** The provider of a recipient domain's mail: its most preferred MX host's; null when its MX hosts cannot be had now. */
export function providerOfDomain(dns: CachingMxResolver): (domain: string) => Promise<string | null> {
  return async (domain) => {
    const route = await dns.route(domain);
    if ('failure' in route) return null;
    const first = route.hosts[0];
    return first ? providerOfHost(first.name) : null;
  };
}
