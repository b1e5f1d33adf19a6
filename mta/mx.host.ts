// Where a domain's mail goes, as address validation asks it (mail/validate.ts), answered by the
// same cached MX look-up delivery uses (mx.resolve.ts): validating a list of addresses at one
// domain asks DNS once a minute, not once an address.
import type { MailHost } from '../mail/validate.ts';
import type { CachingMxResolver } from './mx.resolve.ts';

export function mailHostOf(dns: CachingMxResolver): (domain: string) => Promise<MailHost> {
  return async (domain) => {
    const route = await dns.route(domain);
    if ('failure' in route) return route.failure === 'transient' ? 'unavailable' : route.cause;
    if (!route.implicit) return 'mx';
    // No MX: the domain is its own mail host if it has an address (RFC 5321 §5.1). An address
    // look-up that fails counts as none, as delivery counts it; the same server has just
    // answered the MX question for the name, so a failure here is rare.
    return (await dns.addressesOf(domain)).length > 0 ? 'a_fallback' : 'no_host';
  };
}
