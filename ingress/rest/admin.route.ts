// /v1/admin: tenants, their quotas and their keys. Present only when GATEPOST_ADMIN_TOKEN is set.
import { GatepostError, invalid } from '../../errors/errors.catalog.ts';
import { parseMailbox } from '../../mail/address.ts';
import type { ApiKey, Catalog, KeyKind, KeyScope } from '../../store/catalog.port.ts';
import { BROWSER_KINDS, type KeyRing } from '../../tenancy/keys.ts';
import { createTenant } from '../../tenancy/tenants.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, KeyCreate, KeyParams, KeyUpdate, KeyView, TenantCreate, TenantUpdate, TenantView, listOf } from './schemas.ts';

function checkDefaultFrom(value: string | null | undefined): void {
  if (typeof value === 'string' && !parseMailbox(value)) {
    throw invalid([{ field: 'default_from', message: 'not a valid email address' }]);
  }
}

/** Origins and browser rates mean something only on keys a page holds; a live key never is. */
function checkBrowserSettings(kind: KeyKind, body: { allowed_origins?: unknown; rate_limit?: unknown }): void {
  if (BROWSER_KINDS.includes(kind)) return;
  const given = (['allowed_origins', 'rate_limit'] as const).filter((f) => body[f] !== undefined);
  if (given.length > 0) {
    throw invalid(
      given.map((field) => ({ field, message: `only public and sandbox keys are used from a browser, not ${kind} keys` })),
    );
  }
}

/** What a new key may do: a scope only a live key chooses, capture only a public key chooses. */
function capabilities(body: { kind: KeyKind; scope?: KeyScope; sandbox?: boolean }): Pick<ApiKey, 'scope' | 'sandbox'> {
  const problems = [
    ...(body.scope !== undefined && body.kind !== 'live'
      ? [{ field: 'scope', message: `only a live key has a scope; a ${body.kind} key has sending_access` }]
      : []),
    ...(body.sandbox !== undefined && body.kind !== 'public'
      ? [
          {
            field: 'sandbox',
            message: `only a public key chooses; a ${body.kind} key is ${body.kind === 'sandbox' ? 'always' : 'never'} a sandbox key`,
          },
        ]
      : []),
  ];
  if (problems.length > 0) throw invalid(problems);
  return {
    scope: body.kind === 'live' ? (body.scope ?? 'full_access') : 'sending_access',
    sandbox: body.kind === 'sandbox' || body.sandbox === true,
  };
}

/** The settings a create or update names: rate_limit fields not given keep their current value. */
function browserSettings(
  body: { allowed_origins?: string[]; rate_limit?: { per_key?: number | null; per_ip?: number | null } },
  current: ApiKey['rate_limit'] = { per_key: null, per_ip: null },
): Partial<Pick<ApiKey, 'allowed_origins' | 'rate_limit'>> {
  return {
    ...(body.allowed_origins !== undefined ? { allowed_origins: [...new Set(body.allowed_origins)] } : {}),
    ...(body.rate_limit !== undefined ? { rate_limit: { ...current, ...body.rate_limit } } : {}),
  };
}

export function adminRoutes(app: ZodApp, catalog: Catalog, keys: KeyRing): void {
  const tenantOr404 = async (id: string) => {
    const t = await catalog.getTenant(id);
    if (!t) throw new GatepostError('not_found', `No tenant ${id}.`);
    return t;
  };
  const noKey = (p: { id: string; keyId: string }) => new GatepostError('not_found', `No key ${p.keyId} for tenant ${p.id}.`);
  app.post(
    '/v1/admin/tenants',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'Create a tenant',
        body: TenantCreate,
        response: { 201: answer('The tenant.', TenantView), 400: refusal('Invalid.') },
      },
    },
    async (request, reply) => {
      const { body } = request;
      checkDefaultFrom(body.default_from);
      return reply.code(201).send(await createTenant(catalog, body));
    },
  );
  app.get(
    '/v1/admin/tenants',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'List tenants',
        response: { 200: answer('Every tenant.', listOf(TenantView)) },
      },
    },
    async (_request, reply) => reply.code(200).send({ data: await catalog.listTenants() }),
  );
  app.get(
    '/v1/admin/tenants/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'Get a tenant',
        params: IdParam,
        response: {
          200: answer('The tenant.', TenantView),
          404: refusal('No such tenant.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      return reply.code(200).send(await tenantOr404(params.id));
    },
  );
  app.patch(
    '/v1/admin/tenants/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: "Change a tenant's name, default sender, quota or weight in the fair queue",
        params: IdParam,
        body: TenantUpdate,
        response: {
          200: answer('The tenant.', TenantView),
          404: refusal('No such tenant.'),
        },
      },
    },
    async (request, reply) => {
      const { params, body } = request;
      checkDefaultFrom(body.default_from);
      const current = await tenantOr404(params.id);
      const updated = await catalog.updateTenant(params.id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.default_from !== undefined ? { default_from: body.default_from } : {}),
        ...(body.quota !== undefined ? { quota: { ...current.quota, ...body.quota } } : {}),
        ...(body.queue_weight !== undefined ? { queue_weight: body.queue_weight } : {}),
      });
      keys.invalidate();
      return reply.code(200).send(updated);
    },
  );
  app.post(
    '/v1/admin/tenants/:id/keys',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary:
          'Create an API key: live (scope full_access, the default, or sending_access), sandbox, or public (sandbox: true for trying the browser SDK out); sandbox and public keys may carry allowed_origins and rate_limit. The key is shown only in this answer',
        params: IdParam,
        body: KeyCreate,
        response: {
          201: answer('The key record and, once, the key itself in `key`.', KeyView.extend({ key: KeyView.shape.id })),
          400: refusal('Invalid, browser settings on a live key, a scope on a key not live, or sandbox on a key not public.'),
          404: refusal('No such tenant.'),
        },
      },
    },
    async (request, reply) => {
      const { params, body } = request;
      await tenantOr404(params.id);
      checkBrowserSettings(body.kind, body);
      const { key, secret } = await keys.issue(params.id, body.kind, body.name ?? null, {
        ...capabilities(body),
        ...browserSettings(body),
      });
      return reply.code(201).send({ ...key, key: secret });
    },
  );
  app.patch(
    '/v1/admin/tenants/:id/keys/:keyId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: "Change a key's name, or the origins and rates of a key used from a browser (public, sandbox)",
        params: KeyParams,
        body: KeyUpdate,
        response: {
          200: answer('The key record.', KeyView),
          400: refusal('Invalid, or browser settings on a live key.'),
          404: refusal('No such key.'),
        },
      },
    },
    async (request, reply) => {
      const { params, body } = request;
      const current = (await catalog.listKeys(params.id)).find((k) => k.id === params.keyId);
      if (!current) throw noKey(params);
      checkBrowserSettings(current.kind, body);
      const key = await keys.update(params.id, params.keyId, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...browserSettings(body, current.rate_limit),
      });
      if (!key) throw noKey(params);
      return reply.code(200).send(key);
    },
  );
  app.get(
    '/v1/admin/tenants/:id/keys',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: "List a tenant's keys (never the keys themselves)",
        params: IdParam,
        response: {
          200: answer('Key records.', listOf(KeyView)),
          404: refusal('No such tenant.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      await tenantOr404(params.id);
      return reply.code(200).send({ data: await catalog.listKeys(params.id) });
    },
  );
  app.delete(
    '/v1/admin/tenants/:id/keys/:keyId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'Revoke a key; it answers 401 from then on',
        params: KeyParams,
        response: {
          200: answer('The revoked key record.', KeyView),
          404: refusal('No such key.'),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const key = await keys.revoke(params.id, params.keyId);
      if (!key) throw noKey(params);
      return reply.code(200).send(key);
    },
  );
}
