// Tenants and keys through the admin API, and what a bad credential gets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startRelay, type Relay } from '../harness/relay.harness.ts';

let gp: GatepostProcess;
let relay: Relay;
// Through a relay, so that live keys send from the tenants' unverified domains.
beforeAll(async () => {
  relay = await startRelay();
  gp = await startGatepost({ relayUrl: relay.url });
});
afterAll(async () => {
  await gp.dispose();
  await relay.close();
});

const send = (key: string | undefined, headers: Record<string, string> = {}) =>
  gp.request('POST', '/v1/emails', { key, headers, body: { to: 'k@example.com', subject: 's', html: '<p>h</p>' } });

describe('admin API', () => {
  it('creates tenants and live, sandbox and public keys with their prefixes', async () => {
    const t = await gp.admin('POST', '/tenants', {
      name: 'Acme',
      default_from: 'Acme <mail@acme.example>',
      quota: { per_day: 1000 },
    });
    expect(t.status).toBe(201);
    expect(t.body).toMatchObject({
      name: 'Acme',
      default_from: 'Acme <mail@acme.example>',
      quota: { per_second: null, per_day: 1000 },
    });
    expect(t.body.id).toMatch(/^ten_/);
    for (const kind of ['live', 'sandbox', 'public']) {
      const k = await gp.admin('POST', `/tenants/${t.body.id}/keys`, { kind, name: `${kind} key` });
      expect(k.status).toBe(201);
      expect(k.body.key).toMatch(new RegExp(`^gp_${kind}_[A-Za-z0-9_-]{32}$`));
      expect(k.body).toMatchObject({ kind, tenant_id: t.body.id, revoked_at: null });
      expect(k.body.key.startsWith(k.body.prefix)).toBe(true);
    }
    const list = await gp.admin('GET', `/tenants/${t.body.id}/keys`);
    expect(list.body.data).toHaveLength(3);
    expect(JSON.stringify(list.body)).not.toMatch(/gp_(live|sandbox|public)_[A-Za-z0-9_-]{32}/);
    expect((await gp.admin('GET', `/tenants/${t.body.id}`)).body.name).toBe('Acme');
    expect((await gp.admin('GET', '/tenants')).body.data.some((x: { id: string }) => x.id === t.body.id)).toBe(true);
  });

  it('stores keys hashed, never in plain text', async () => {
    const t = await gp.tenant();
    const dump = JSON.stringify(await gp.catalogRows('api_keys'));
    expect(dump).not.toContain(t.live);
    expect(dump).not.toContain(t.sandbox);
    expect(dump).toMatch(/[0-9a-f]{64}/);
  });

  it('revokes a key: it answers 401 from then on', async () => {
    const t = await gp.tenant();
    expect((await send(t.live)).status).toBe(202);
    const keys = (await gp.admin('GET', `/tenants/${t.id}/keys`)).body.data;
    const liveKey = keys.find((k: { kind: string }) => k.kind === 'live');
    const revoked = await gp.admin('DELETE', `/tenants/${t.id}/keys/${liveKey.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toBeTruthy();
    const after = await send(t.live);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('invalid_api_key');
    expect((await gp.admin('DELETE', `/tenants/${t.id}/keys/key_nope`)).status).toBe(404);
  });

  it('refuses the admin API without the token, and bad bodies', async () => {
    expect((await gp.request('GET', '/v1/admin/tenants')).status).toBe(401);
    expect((await gp.request('GET', '/v1/admin/tenants', { key: 'wrong' })).status).toBe(401);
    expect((await gp.request('GET', '/v1/admin/tenants', { key: `${ADMIN_TOKEN}x` })).status).toBe(401);
    const bad = await gp.admin('POST', '/tenants', { name: '', quota: { per_day: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'quota.per_day']);
    expect((await gp.admin('POST', '/tenants/ten_nope/keys', { kind: 'live' })).status).toBe(404);
    expect((await gp.admin('POST', '/tenants', { name: 'x', default_from: 'not an address' })).status).toBe(400);
  });
});

describe('authentication', () => {
  it('answers 401 with how to authenticate when the key is missing', async () => {
    const res = await send(undefined);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('missing_api_key');
    expect(res.body.error.message).toContain('Authorization: Bearer');
    const basic = await send(undefined, { authorization: 'Basic abc' });
    expect(basic.status).toBe(401);
    expect(basic.body.error.message).toContain('Bearer');
  });

  it('answers 401 for an unknown key and 403 for a public key on the native API', async () => {
    const unknown = await send('gp_live_doesnotexist');
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('invalid_api_key');
    const t = await gp.tenant();
    const pub = await send(t.publicKey);
    expect(pub.status).toBe(403);
    expect(pub.body.error.code).toBe('key_not_allowed');
  });
});

describe('without GATEPOST_ADMIN_TOKEN', () => {
  it('has no admin API', async () => {
    const plain = await startGatepost({ env: { GATEPOST_ADMIN_TOKEN: '' } });
    try {
      const res = await plain.request('GET', '/v1/admin/tenants', { key: ADMIN_TOKEN });
      expect(res.status).toBe(404);
    } finally {
      await plain.dispose();
    }
  });
});
