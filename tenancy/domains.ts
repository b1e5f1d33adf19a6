// Sending domains (issue 21 items 1 and 2): a tenant adds a domain, Gatepost makes its DKIM keys
// and says which DNS records to publish, verification looks them up, and a verified domain is one
// the tenant may send from and Gatepost signs for. The records themselves are in domain.records.ts.
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { domainToASCII } from 'node:url';
import { LRUCache } from 'lru-cache';
import { GatepostError } from '../errors/errors.catalog.ts';
import { dnsResolver } from '../lib/dns.ts';
import { newId } from '../lib/ids.ts';
import { isDomainName } from '../mail/address.ts';
import { dkimSigner, type DkimSigner } from '../mail/dkim.ts';
import type { Catalog, DkimKey, SendingDomain } from '../store/catalog.port.ts';
import {
  checkRecords,
  domainRecords,
  returnPathDomain,
  verifiedTrackingHost,
  type DnsRecord,
  type RecordSettings,
} from './domain.records.ts';

export type { DnsRecord, RecordSettings };

/** A domain as the API shows it: never its private keys. */
export interface DomainView {
  id: string;
  name: string;
  status: SendingDomain['status'];
  records: DnsRecord[];
  tracking_host: string | null;
  checked_at: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The name as stored: trimmed, lower case, no trailing dot, international labels as IDNA
 * A-labels (bücher.example → xn--bcher-kva.example); null when it is not a domain name.
 */
export function domainName(input: string): string | null {
  const trimmed = input.trim().replace(/\.$/, '');
  if (trimmed === '' || /[\s/@:]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed).toLowerCase();
  return ascii !== '' && isDomainName(ascii) ? ascii : null;
}

/**
 * A tracking host as stored (domainName's form). It must lie under the sending domain: a CNAME
 * cannot sit at the domain's apex beside its MX and TXT records, and a tenant must not put its
 * links on another's name.
 */
export function trackingHostName(input: string, domain: string): string {
  const host = domainName(input);
  if (host && host.endsWith(`.${domain}`)) return host;
  throw new GatepostError('tracking_host_invalid', `"${input}" is not a host name under ${domain}.`, {
    details: [{ field: 'tracking_host', message: `a host name under ${domain}, like track.${domain}` }],
  });
}

/** Selectors name the month the keys were made, `r` for RSA and `e` for Ed25519: gp202611r, gp202611e. */
export function selectorsFor(at: Date): { rsa: string; ed25519: string } {
  const month = `${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
  return { rsa: `gp${month}r`, ed25519: `gp${month}e` };
}

const newKeyPair = promisify(generateKeyPair);

/**
 * A fresh RSA-2048 and Ed25519 pair, made on libuv's thread pool (an RSA key takes long enough to
 * stall the event loop); `p=` is the SubjectPublicKeyInfo for RSA and the raw 32-byte key for
 * Ed25519 (RFC 8463 §4.2).
 */
export async function generateDkimKeys(at: Date): Promise<{ rsa: DkimKey; ed25519: DkimKey }> {
  const selectors = selectorsFor(at);
  const [rsa, ed] = await Promise.all([newKeyPair('rsa', { modulusLength: 2048 }), newKeyPair('ed25519')]);
  const edRaw = Buffer.from(ed.publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return {
    rsa: {
      selector: selectors.rsa,
      public_key: rsa.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      private_key: rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    },
    ed25519: {
      selector: selectors.ed25519,
      public_key: edRaw.toString('base64'),
      private_key: ed.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    },
  };
}

/** The hosts a verified sending domain's mail links to; both null for mail from any other domain. */
export interface LinkHosts {
  /** The tracking host, once its CNAME was found: links use it in place of GATEPOST_PUBLIC_URL's host. */
  tracking_host: string | null;
  /** The return-path domain (`bounces.<domain>`), which the mailto unsubscribe address is on. */
  return_path: string | null;
}

export interface DomainsOptions extends RecordSettings {
  /** GATEPOST_DNS_SERVERS: where verification looks records up; null: the system's resolver. */
  dnsServers: string[] | null;
}

const MAX_CACHED = 10_000;
/** How long another replica's verification or deletion may go unseen here. */
const CACHE_MS = 30_000;

export class Domains {
  /** A tenant's verified names, for the gate's sender check on every live send. */
  private readonly verifiedNames = new LRUCache<string, ReadonlySet<string>>({ max: MAX_CACHED, ttl: CACHE_MS });
  /** `<tenant> <domain>` → its signer, or false when it is no verified domain of the tenant. */
  private readonly signers = new LRUCache<string, DkimSigner | false>({ max: MAX_CACHED, ttl: CACHE_MS });
  /** `<tenant> <domain>` → the hosts its mail's links use. */
  private readonly linkHosts = new LRUCache<string, LinkHosts>({ max: MAX_CACHED, ttl: CACHE_MS });

  constructor(
    private readonly catalog: Catalog,
    private readonly options: DomainsOptions,
  ) {}

  view(d: SendingDomain): DomainView {
    return {
      id: d.id,
      name: d.name,
      status: d.status,
      records: domainRecords(d, this.options),
      tracking_host: d.tracking_host,
      checked_at: d.checked_at,
      verified_at: d.verified_at,
      created_at: d.created_at,
      updated_at: d.updated_at,
    };
  }

  async create(tenantId: string, name: string, trackingHost: string | null = null): Promise<DomainView> {
    const ascii = domainName(name);
    if (!ascii) {
      throw new GatepostError('invalid_request', `"${name}" is not a domain name.`, {
        details: [{ field: 'name', message: 'not a domain name (like example.com)' }],
      });
    }
    const domain = await this.catalog.createDomain({
      id: newId('dom'),
      tenant_id: tenantId,
      name: ascii,
      dkim: await generateDkimKeys(new Date()),
      tracking_host: trackingHost === null ? null : trackingHostName(trackingHost, ascii),
    });
    return this.view(domain);
  }

  /** Names the domain's tracking host (null: none); its CNAME is pending until the next verification. */
  async setTrackingHost(tenantId: string, id: string, trackingHost: string | null): Promise<DomainView> {
    const domain = await this.found(tenantId, id);
    const host = trackingHost === null ? null : trackingHostName(trackingHost, domain.name);
    const updated = await this.catalog.setTrackingHost(tenantId, id, host);
    this.forget(tenantId);
    if (!updated) throw notFound(id);
    return this.view(updated);
  }

  async list(tenantId: string): Promise<DomainView[]> {
    return (await this.catalog.listDomains(tenantId)).map((d) => this.view(d));
  }

  async get(tenantId: string, id: string): Promise<DomainView> {
    return this.view(await this.found(tenantId, id));
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!(await this.catalog.deleteDomain(tenantId, id))) throw notFound(id);
    this.forget(tenantId);
  }

  /**
   * Looks every record up and records what it found. Verified when both DKIM records and SPF
   * match; a verified domain whose records are gone goes back to pending.
   */
  async verify(tenantId: string, id: string): Promise<DomainView> {
    const domain = await this.found(tenantId, id);
    const { status, checks } = await checkRecords(domain, this.options, dnsResolver(this.options.dnsServers));
    const checked = await this.catalog.recordDomainCheck(tenantId, id, { status, checks });
    this.forget(tenantId);
    if (!checked) throw notFound(id);
    return this.view(checked);
  }

  /** Whether the tenant has verified `domain` (lower case): the gate asks on every live send. */
  async isVerified(tenantId: string, domain: string): Promise<boolean> {
    let names = this.verifiedNames.get(tenantId);
    if (!names) {
      names = new Set(await this.catalog.verifiedDomainNames(tenantId));
      this.verifiedNames.set(tenantId, names);
    }
    return names.has(domain);
  }

  /** The keys to sign mail from `fromDomain` with; null when it is not a verified domain of the tenant. */
  async signerFor(tenantId: string, fromDomain: string): Promise<DkimSigner | null> {
    const key = `${tenantId} ${fromDomain.toLowerCase()}`;
    let signer = this.signers.get(key);
    if (signer === undefined) {
      const d = await this.catalog.verifiedDomain(tenantId, fromDomain.toLowerCase());
      signer = d ? dkimSigner(d.name, d.dkim) : false;
      this.signers.set(key, signer);
    }
    return signer || null;
  }

  /** Where the links of the tenant's mail from `fromDomain` point (the gate asks on every send). */
  async linkHostsFor(tenantId: string, fromDomain: string): Promise<LinkHosts> {
    const key = `${tenantId} ${fromDomain.toLowerCase()}`;
    let hosts = this.linkHosts.get(key);
    if (!hosts) {
      const d = await this.catalog.verifiedDomain(tenantId, fromDomain.toLowerCase());
      hosts = d
        ? { tracking_host: verifiedTrackingHost(d, this.options), return_path: returnPathDomain(d.name) }
        : { tracking_host: null, return_path: null };
      this.linkHosts.set(key, hosts);
    }
    return hosts;
  }

  private async found(tenantId: string, id: string): Promise<SendingDomain> {
    const domain = await this.catalog.getDomain(tenantId, id);
    if (!domain) throw notFound(id);
    return domain;
  }

  /** A tenant's domains changed: its cached answers go. */
  private forget(tenantId: string): void {
    this.verifiedNames.delete(tenantId);
    for (const cache of [this.signers, this.linkHosts]) {
      for (const key of cache.keys()) if (key.startsWith(`${tenantId} `)) cache.delete(key);
    }
  }
}

const notFound = (id: string) => new GatepostError('not_found', `No sending domain has the id "${id}".`);
