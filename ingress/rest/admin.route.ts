// /v1/admin: tenants, their quotas and their keys. Present only when GATEPOST_ADMIN_TOKEN is set.
import { GatepostError, invalid } from '../../errors/errors.catalog.ts';
import { parseMailbox } from '../../mail/address.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { KeyRing } from '../../tenancy/keys.ts';
import { createTenant } from '../../tenancy/tenants.ts';
import { ErrorBody, route, type AnyRoute } from './route.ts';
import { IdParam, KeyCreate, KeyParams, KeyView, TenantCreate, TenantUpdate, TenantView, listOf } from './schemas.ts';

function checkDefaultFrom(value: string | null | undefined): void {
  if (typeof value === 'string' && !parseMailbox(value)) {
    throw invalid([{ field: 'default_from', message: 'not a valid email address' }]);
  }
}

export function adminRoutes(catalog: Catalog, keys: KeyRing): AnyRoute[] {
  const tenantOr404 = async (id: string) => {
    const t = await catalog.getTenant(id);
    if (!t) throw new GatepostError('not_found', `No tenant ${id}.`);
    return t;
  };
  const admin = { tag: 'Admin', auth: 'admin' as const };
  return [
    route({
      ...admin,
      method: 'POST',
      url: '/v1/admin/tenants',
      summary: 'Create a tenant',
      body: TenantCreate,
      responses: { 201: { description: 'The tenant.', schema: TenantView }, 400: { description: 'Invalid.', schema: ErrorBody } },
      handler: async ({ body }) => {
        checkDefaultFrom(body.default_from);
        return { status: 201, body: await createTenant(catalog, body) };
      },
    }),
    route({
      ...admin,
      method: 'GET',
      url: '/v1/admin/tenants',
      summary: 'List tenants',
      responses: { 200: { description: 'Every tenant.', schema: listOf(TenantView) } },
      handler: async () => ({ status: 200, body: { data: await catalog.listTenants() } }),
    }),
    route({
      ...admin,
      method: 'GET',
      url: '/v1/admin/tenants/:id',
      summary: 'Get a tenant',
      params: IdParam,
      responses: {
        200: { description: 'The tenant.', schema: TenantView },
        404: { description: 'No such tenant.', schema: ErrorBody },
      },
      handler: async ({ params }) => ({ status: 200, body: await tenantOr404(params.id) }),
    }),
    route({
      ...admin,
      method: 'PATCH',
      url: '/v1/admin/tenants/:id',
      summary: "Change a tenant's name, default sender or quota",
      params: IdParam,
      body: TenantUpdate,
      responses: {
        200: { description: 'The tenant.', schema: TenantView },
        404: { description: 'No such tenant.', schema: ErrorBody },
      },
      handler: async ({ params, body }) => {
        checkDefaultFrom(body.default_from);
        const current = await tenantOr404(params.id);
        const updated = await catalog.updateTenant(params.id, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.default_from !== undefined ? { default_from: body.default_from } : {}),
          ...(body.quota !== undefined ? { quota: { ...current.quota, ...body.quota } } : {}),
        });
        keys.invalidate();
        return { status: 200, body: updated };
      },
    }),
    route({
      ...admin,
      method: 'POST',
      url: '/v1/admin/tenants/:id/keys',
      summary: 'Create an API key (live, sandbox or public); the key is shown only in this answer',
      params: IdParam,
      body: KeyCreate,
      responses: {
        201: {
          description: 'The key record and, once, the key itself in `key`.',
          schema: KeyView.extend({ key: KeyView.shape.id }),
        },
        404: { description: 'No such tenant.', schema: ErrorBody },
      },
      handler: async ({ params, body }) => {
        await tenantOr404(params.id);
        const { key, secret } = await keys.issue(params.id, body.kind, body.name ?? null);
        return { status: 201, body: { ...key, key: secret } };
      },
    }),
    route({
      ...admin,
      method: 'GET',
      url: '/v1/admin/tenants/:id/keys',
      summary: "List a tenant's keys (never the keys themselves)",
      params: IdParam,
      responses: {
        200: { description: 'Key records.', schema: listOf(KeyView) },
        404: { description: 'No such tenant.', schema: ErrorBody },
      },
      handler: async ({ params }) => {
        await tenantOr404(params.id);
        return { status: 200, body: { data: await catalog.listKeys(params.id) } };
      },
    }),
    route({
      ...admin,
      method: 'DELETE',
      url: '/v1/admin/tenants/:id/keys/:keyId',
      summary: 'Revoke a key; it answers 401 from then on',
      params: KeyParams,
      responses: {
        200: { description: 'The revoked key record.', schema: KeyView },
        404: { description: 'No such key.', schema: ErrorBody },
      },
      handler: async ({ params }) => {
        const key = await keys.revoke(params.id, params.keyId);
        if (!key) throw new GatepostError('not_found', `No key ${params.keyId} for tenant ${params.id}.`);
        return { status: 200, body: key };
      },
    }),
  ];
}
