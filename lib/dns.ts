// One DNS resolver for every look-up Gatepost makes (webhook hosts, MX, DKIM/SPF/DMARC records):
// the servers of GATEPOST_DNS_SERVERS when given (`ip` or `ip:port`, which tests point at a
// loopback server), the system's otherwise; and answers kept a while, as a caching resolver
// keeps them.
import { Resolver } from 'node:dns/promises';
import { LRUCache } from 'lru-cache';

export function dnsResolver(servers: readonly string[] | null | undefined, timeoutMs = 3000): Resolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers && servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

/**
 * How long an answer is kept: at most this, whatever its TTL. Node's resolver tells the TTL of
 * A and AAAA records only, so other records are kept this long; a changed record is seen within it.
 */
export const DNS_CACHE_MS = 60_000;

/** The DNS answers "no such domain" (NXDOMAIN) and "no records of that type" (NOERROR, no data). */
export const NXDOMAIN = 'ENOTFOUND';
export const NODATA = 'ENODATA';
const isNegative = (error: unknown) => [NXDOMAIN, NODATA].includes((error as NodeJS.ErrnoException)?.code ?? '');

/**
 * Answers to questions keyed by name: a question asked again while its answer is kept gets the
 * same answer without a look-up, and concurrent questions about one key share one look-up.
 */
export class KeptAnswers<T> {
  private readonly cache = new LRUCache<string, Promise<T>>({ max: 10_000, ttl: DNS_CACHE_MS });

  /**
   * The kept answer to `key`, or a new look-up kept for `keepMs(answer)` milliseconds (0: not
   * kept). A failed look-up is kept only when `keepFailure` says so (a negative answer is an answer).
   */
  get(key: string, ask: () => Promise<T>, keepMs: (answer: T) => number, keepFailure: (error: unknown) => boolean = () => false): Promise<T> {
    const hit = this.cache.get(key);
    if (hit) return hit;
    const asked = ask();
    this.cache.set(key, asked);
    const settle = (ms: number) => {
      if (this.cache.get(key) !== asked) return;
      if (ms > 0) this.cache.set(key, asked, { ttl: Math.min(ms, DNS_CACHE_MS) });
      else this.cache.delete(key);
    };
    asked.then(
      (answer) => settle(keepMs(answer)),
      (error: unknown) => settle(keepFailure(error) ? DNS_CACHE_MS : 0),
    );
    return asked;
  }
}

/**
 * `resolve(name, type)` with its answers kept DNS_CACHE_MS, negative ones (NXDOMAIN, no data)
 * too: what mailauth asks for each received message (the sender's SPF, DKIM key and DMARC
 * policy) is asked of the DNS server once a minute per name, not once a message. A server that
 * cannot answer (a timeout, SERVFAIL) is asked again next time.
 */
export function keptRecords<T>(resolve: (name: string, type: string) => Promise<T>): (name: string, type: string) => Promise<T> {
  const answers = new KeptAnswers<T>();
  return (name, type) => answers.get(`${type} ${name.toLowerCase()}`, () => resolve(name, type), () => DNS_CACHE_MS, isNegative);
}
