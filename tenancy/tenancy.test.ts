// Keys and tenants against a real SQLite catalog: issuing, resolving, revoking, what each key
// may do, and the default tenant of a first start.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatepostError } from '../errors/errors.catalog.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { tempDir } from '../test/harness/gatepost.harness.ts';
import { KeyRing } from './keys.ts';
import { mayReadMessage, permissionsOf, requirePermission } from './permissions.ts';
import { bootstrapDefaultTenant, createTenant } from './tenants.ts';

let catalog: SqliteCatalog;
let ring: KeyRing;
beforeAll(() => {
  catalog = new SqliteCatalog(join(tempDir('tenancy'), 'catalog.db'));
  ring = new KeyRing(catalog);
});
afterAll(async () => {
  await catalog.close();
});

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof GatepostError ? error.code : String(error);
  }
  return null;
};

describe('KeyRing', () => {
  it('issues keys with their prefix, resolves them to their tenant, and refuses a revoked one at once', async () => {
    const tenant = await createTenant(catalog, { name: 'acme' });
    const { key, secret } = await ring.issue(tenant.id, 'live', 'ci', { scope: 'sending_access' });
    expect(secret).toMatch(/^gp_live_[A-Za-z0-9_-]{32}$/);
    expect(secret.startsWith(key.prefix)).toBe(true);
    expect(key).toMatchObject({ kind: 'live', scope: 'sending_access', sandbox: false });
    const resolved = await ring.resolve(secret);
    expect(resolved.tenant.id).toBe(tenant.id);
    expect(resolved.key.id).toBe(key.id);

    await ring.revoke(tenant.id, key.id);
    await expect(ring.resolve(secret)).rejects.toMatchObject({ code: 'invalid_api_key' });
    await expect(ring.resolve('gp_live_unknown')).rejects.toMatchObject({ code: 'invalid_api_key' });
  });

  it('gives each kind its defaults: a live key full access, a sandbox key capture, a public key neither', async () => {
    const tenant = await createTenant(catalog, { name: 'defaults' });
    const kinds = await Promise.all((['live', 'sandbox', 'public'] as const).map((k) => ring.issue(tenant.id, k, null)));
    expect(kinds.map(({ key }) => [key.kind, key.scope, key.sandbox])).toEqual([
      ['live', 'full_access', false],
      ['sandbox', 'sending_access', true],
      ['public', 'sending_access', false],
    ]);
  });
});

describe('permissions', () => {
  it('lets each kind of key do what docs/security.md says, and refuses the rest with its code', () => {
    const full = { kind: 'live', scope: 'full_access' } as const;
    const sending = { kind: 'live', scope: 'sending_access' } as const;
    const sandbox = { kind: 'sandbox', scope: 'sending_access' } as const;
    const pub = { kind: 'public', scope: 'sending_access' } as const;
    expect([...permissionsOf(full)].sort()).toEqual([
      'manage',
      'read_captures',
      'read_events',
      'read_messages',
      'read_templates',
      'send',
    ]);
    expect([...permissionsOf(sending)].sort()).toEqual(['read_messages', 'send']);
    expect([...permissionsOf(sandbox)].sort()).toEqual([
      'read_captures',
      'read_events',
      'read_messages',
      'read_templates',
      'send',
    ]);
    expect([...permissionsOf(pub)]).toEqual([]);
    expect(refusal(() => requirePermission(sandbox, 'manage'))).toBe('insufficient_scope');
    expect(refusal(() => requirePermission(sending, 'read_templates'))).toBe('insufficient_scope');
    expect(refusal(() => requirePermission(pub, 'send'))).toBe('key_not_allowed');
    expect(refusal(() => requirePermission(full, 'manage'))).toBeNull();
  });

  it("lets a full key read its tenant's messages, a sending key those it sent, a sandbox key sandbox ones", () => {
    const key = (id: string, kind: 'live' | 'sandbox' | 'public', scope: 'full_access' | 'sending_access') =>
      ({ id, tenant_id: 'ten_1', kind, scope }) as const;
    const full = key('key_full', 'live', 'full_access');
    const sending = key('key_sending', 'live', 'sending_access');
    const sandbox = key('key_sandbox', 'sandbox', 'sending_access');
    const pub = key('key_public', 'public', 'sending_access');
    const message = (key_id: string, sandbox = false, tenant_id = 'ten_1') => ({ key_id, sandbox, tenant_id });

    expect(mayReadMessage(full, message('key_sending'))).toBe(true);
    expect(mayReadMessage(full, message('key_sandbox', true))).toBe(true);
    expect(mayReadMessage(full, message('key_full', false, 'ten_2'))).toBe(false);
    expect(mayReadMessage(sending, message('key_sending'))).toBe(true);
    expect(mayReadMessage(sending, message('key_full'))).toBe(false);
    expect(mayReadMessage(sending, message('key_sending', false, 'ten_2'))).toBe(false);
    expect(mayReadMessage(sandbox, message('key_sandbox', true))).toBe(true);
    expect(mayReadMessage(sandbox, message('key_public', true))).toBe(true);
    expect(mayReadMessage(sandbox, message('key_sandbox', false))).toBe(false);
    expect(mayReadMessage(pub, message('key_public', true))).toBe(false);
  });
});

describe('bootstrapDefaultTenant', () => {
  it('makes a default tenant with a live and a sandbox key on a first start, and nothing later', async () => {
    const fresh = new SqliteCatalog(join(tempDir('tenancy-first'), 'catalog.db'));
    try {
      const keys = new KeyRing(fresh);
      const first = await bootstrapDefaultTenant(fresh, keys, 'mail.example.com');
      expect(first).not.toBeNull();
      expect(first!.tenant).toMatchObject({ name: 'default', default_from: 'Gatepost <noreply@mail.example.com>' });
      expect((await keys.resolve(first!.live)).key).toMatchObject({ kind: 'live', scope: 'full_access' });
      expect((await keys.resolve(first!.sandbox)).key).toMatchObject({ kind: 'sandbox', sandbox: true });
      expect(await bootstrapDefaultTenant(fresh, keys, 'mail.example.com')).toBeNull();
      expect(await fresh.listTenants()).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });

  it('uses a placeholder domain when the machine name is not a mail domain', async () => {
    const fresh = new SqliteCatalog(join(tempDir('tenancy-bare'), 'catalog.db'));
    try {
      const made = await bootstrapDefaultTenant(fresh, new KeyRing(fresh), 'buildbox');
      expect(made!.tenant.default_from).toBe('Gatepost <noreply@gatepost.localhost>');
    } finally {
      await fresh.close();
    }
  });
});
