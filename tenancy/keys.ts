// API keys: issuing (gp_live_, gp_sandbox_, gp_public_), hashing, and resolving a presented key
// to its tenant. Resolutions are cached briefly; a revocation in this process clears the cache
// at once, and the short lifetime bounds how long another replica may still accept a revoked key.
import { GatepostError } from '../errors/errors.catalog.ts';
import { newId, randomToken, sha256Hex } from '../lib/ids.ts';
import type { ApiKey, BrowserRateLimit, Catalog, KeyKind, KeySettings, Tenant } from '../store/catalog.port.ts';

export const KEY_PREFIX: Record<KeyKind, string> = { live: 'gp_live_', sandbox: 'gp_sandbox_', public: 'gp_public_' };

/** The kinds of key a page may hold: they take an origin allow-list and browser rate limits. */
export const BROWSER_KINDS: readonly KeyKind[] = ['public', 'sandbox'];

/** Browser SDK sends per minute when a key sets no rate of its own. */
export const DEFAULT_BROWSER_RATE = { per_key: 100, per_ip: 10 } as const;

/** A key's browser rates, its own where it has them, else the defaults. */
export function browserRate(limit: BrowserRateLimit): { per_key: number; per_ip: number } {
  return { per_key: limit.per_key ?? DEFAULT_BROWSER_RATE.per_key, per_ip: limit.per_ip ?? DEFAULT_BROWSER_RATE.per_ip };
}

const CACHE_MS = 5_000;

export interface ResolvedKey {
  key: ApiKey;
  tenant: Tenant;
}

export class KeyRing {
  private readonly cache = new Map<string, { resolved: ResolvedKey | null; until: number }>();

  constructor(private readonly catalog: Catalog) {}

  async issue(
    tenantId: string,
    kind: KeyKind,
    name: string | null,
    settings: Partial<Pick<ApiKey, 'scope' | 'sandbox' | 'allowed_origins' | 'rate_limit'>> = {},
  ): Promise<{ key: ApiKey; secret: string }> {
    const secret = `${KEY_PREFIX[kind]}${randomToken(24)}`;
    const key = await this.catalog.createKey(
      { id: newId('key'), tenant_id: tenantId, kind, name, prefix: secret.slice(0, KEY_PREFIX[kind].length + 6), ...settings },
      sha256Hex(secret),
    );
    return { key, secret };
  }

  /** Changes a key's settings; this process sees them at once, other replicas within the cache's life. */
  async update(tenantId: string, keyId: string, patch: Partial<KeySettings>): Promise<ApiKey | null> {
    const key = await this.catalog.updateKey(tenantId, keyId, patch);
    this.cache.clear();
    return key;
  }

  async revoke(tenantId: string, keyId: string): Promise<ApiKey | null> {
    const key = await this.catalog.revokeKey(tenantId, keyId);
    this.cache.clear();
    return key;
  }

  /** Forget cached resolutions (after a tenant's settings change). */
  invalidate(): void {
    this.cache.clear();
  }

  async resolve(secret: string): Promise<ResolvedKey> {
    const hash = sha256Hex(secret);
    const now = Date.now();
    let hit = this.cache.get(hash);
    if (!hit || hit.until < now) {
      const key = await this.catalog.findKeyByHash(hash);
      const tenant = key ? await this.catalog.getTenant(key.tenant_id) : null;
      hit = { resolved: key && tenant ? { key, tenant } : null, until: now + CACHE_MS };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, hit);
    }
    if (!hit.resolved) throw new GatepostError('invalid_api_key');
    return hit.resolved;
  }
}
