// Tenants: creation with defaults, and the default tenant a first start makes.
import { newId } from '../lib/ids.ts';
import { isValidAddress } from '../mail/address.ts';
import type { Catalog, Quota, Tenant } from '../store/catalog.port.ts';
import type { KeyRing } from './keys.ts';

export const NO_LIMITS: Quota = { per_second: null, per_day: null };

export function createTenant(
  catalog: Catalog,
  t: { name: string; default_from?: string | null; quota?: Partial<Quota> },
): Promise<Tenant> {
  return catalog.createTenant({
    id: newId('ten'),
    name: t.name,
    default_from: t.default_from ?? null,
    quota: { ...NO_LIMITS, ...t.quota },
  });
}

/**
 * On a first start (no tenants yet) makes a default tenant with a live and a sandbox key and
 * returns them, so a person trying Gatepost out can send at once. Null on later starts.
 */
export async function bootstrapDefaultTenant(
  catalog: Catalog,
  keys: KeyRing,
  hostname: string,
): Promise<{ tenant: Tenant; live: string; sandbox: string } | null> {
  if ((await catalog.listTenants()).length > 0) return null;
  // A bare machine name (no dot) is not a mail domain; the operator sets a real sender later.
  const domain = isValidAddress(`noreply@${hostname}`) ? hostname : 'gatepost.localhost';
  const tenant = await createTenant(catalog, { name: 'default', default_from: `Gatepost <noreply@${domain}>` });
  const live = await keys.issue(tenant.id, 'live', 'created at first start');
  const sandbox = await keys.issue(tenant.id, 'sandbox', 'created at first start');
  return { tenant, live: live.secret, sandbox: sandbox.secret };
}
