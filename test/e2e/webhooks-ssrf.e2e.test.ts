// The SSRF guard, end to end, with GATEPOST_WEBHOOK_ALLOW unset so the refusals are real. At
// creation: private, loopback, metadata, IPv6, IPv4-mapped and decimal literals, and a host name
// that resolves (through a DNS server of the test's own) to loopback, are refused, and nothing
// connects to the listeners. At delivery: endpoints stored while those networks were allowed,
// and names whose DNS answer changed after creation (rebinding, to loopback and to the metadata
// address), are refused before every attempt; the listeners see no connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startReceiver, type Receiver } from '../harness/receiver.harness.ts';

let dns: DnsServer;
let v4: Receiver;
let v6: Receiver;
let gp: GatepostProcess;
let t: Awaited<ReturnType<GatepostProcess['tenant']>>;

// 93.184.215.14 stands for "some public address": endpoints that resolve to it are never sent
// anything (they are subscribed to events no test produces until their name has moved).
const PUBLIC = '93.184.215.14';

beforeAll(async () => {
  dns = await startDns({
    'private.test': { A: ['127.0.0.1'] },
    'rebind.test': { A: [PUBLIC] },
    'meta.test': { A: [PUBLIC] },
  });
  v4 = await startReceiver({ host: '127.0.0.1' });
  v6 = await startReceiver({ host: '::1' });
  gp = await startGatepost({
    env: { GATEPOST_WEBHOOK_ALLOW: '', GATEPOST_DNS_SERVERS: dns.address, GATEPOST_WEBHOOK_RETRY: '1h' },
  });
  t = await gp.tenant();
});
afterAll(async () => {
  await gp?.dispose();
  await v4?.close();
  await v6?.close();
  await dns?.close();
});

const create = (url: string, events = ['email.sent']) =>
  gp.request('POST', '/v1/webhooks', { key: t.live, body: { url, events } });
const sendSandbox = () =>
  gp.request('POST', '/v1/emails', { key: t.sandbox, body: { to: 'ssrf@example.com', subject: 's', html: '<p>h</p>' } });
const attempts = async (id: string): Promise<any[]> => {
  const res = await gp.request('GET', `/v1/webhooks/${id}/deliveries`, { key: t.live });
  if (res.status !== 200)
    throw new Error(`GET /v1/webhooks/${id}/deliveries answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
};
/** The newest attempt, once there are more than `seen`. */
const attemptAfter = (id: string, seen: number) =>
  eventually(async () => ((await attempts(id)).length > seen ? (await attempts(id))[0] : undefined));

describe('the SSRF guard', () => {
  const stored: Record<string, string> = {};

  it('refuses private, loopback, link-local, IPv6, mapped, decimal and resolved-private URLs at creation; nothing connects', async () => {
    const refusals: [string, string][] = [
      ['https://10.0.0.1/hook', '10.0.0.1 is private'],
      [`https://127.0.0.1:${v4.port}/hook`, '127.0.0.1 is loopback'],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
      [`https://[::1]:${v6.port}/hook`, '::1 is loopback'],
      [`https://[::ffff:127.0.0.1]:${v4.port}/hook`, 'IPv4-mapped form of 127.0.0.1, which is loopback'],
      [`https://2130706433:${v4.port}/hook`, '127.0.0.1 is loopback'],
      [`https://private.test:${v4.port}/hook`, 'private.test resolves to 127.0.0.1, which is loopback'],
      ['http://rebind.test/hook', 'must be https'],
      ['http://nowhere.test/hook', 'must be https'],
    ];
    for (const [url, why] of refusals) {
      const res = await create(url);
      expect(res.status, url).toBe(422);
      expect(res.body.error.code).toBe('webhook_url_refused');
      expect(res.body.error.message).toContain(why);
      expect(res.body.error.details).toEqual([{ field: 'url', message: expect.stringContaining(why) }]);
    }
    expect(dns.queries).toContain('private.test A');
    expect(v4.connections).toBe(0);
    expect(v6.connections).toBe(0);
    expect((await gp.request('GET', '/v1/webhooks', { key: t.live })).body.data).toEqual([]);

    // Names that resolve to a public address are taken; their DNS answers move later.
    for (const name of ['rebind', 'meta']) {
      const res = await create(`https://${name}.test:${v4.port}/${name}`, ['email.bounced']);
      expect(res.status).toBe(201);
      stored[name] = res.body.id;
    }
  });

  it("never reaches Gatepost's own API, even where loopback is allowed", async () => {
    gp.setEnv({ GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1,10.0.0.0/8' });
    await gp.restart();
    const own = new URL(gp.url);
    const res = await create(`http://127.0.0.1:${own.port}/v1/admin/tenants`);
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("Gatepost's own service");
  });

  it('refuses at delivery what the guard refuses now, before connecting, whatever was allowed when it was stored', async () => {
    // Stored while GATEPOST_WEBHOOK_ALLOW let these networks through (previous test's restart).
    const urls: Record<string, string> = {
      loopback: `http://127.0.0.1:${v4.port}/loopback`,
      ipv6: `http://[::1]:${v6.port}/ipv6`,
      mapped: `http://[::ffff:127.0.0.1]:${v4.port}/mapped`,
      decimal: `http://2130706433:${v4.port}/decimal`,
      named: `http://private.test:${v4.port}/named`,
    };
    for (const [name, url] of Object.entries(urls)) {
      const res = await create(url);
      expect(res.status, url).toBe(201);
      stored[name] = res.body.id;
    }
    // Never sent anything while allowed: subscribed to an event no send here produces.
    stored.private = (await create('http://10.0.0.1:9/private', ['email.bounced'])).body.id;

    // While allowed, each listener is reached: the refusals below are the guard's doing.
    expect((await sendSandbox()).status).toBe(202);
    await eventually(() => ['/loopback', '/mapped', '/decimal', '/named'].every((p) => v4.received.some((d) => d.path === p)));
    await eventually(() => v6.received.some((d) => d.path === '/ipv6'));

    // Now: nothing allowed, and the two names rebound (to loopback, and to the metadata address).
    dns.records.set('rebind.test', { A: ['127.0.0.1'] });
    dns.records.set('meta.test', { A: ['169.254.169.254'] });
    gp.setEnv({ GATEPOST_WEBHOOK_ALLOW: '' });
    await gp.restart();
    for (const name of ['rebind', 'meta', 'private']) {
      const res = await gp.request('PATCH', `/v1/webhooks/${stored[name]}`, { key: t.live, body: { events: ['email.sent'] } });
      expect(res.status).toBe(200);
    }
    const seen: Record<string, number> = {};
    for (const [name, id] of Object.entries(stored)) seen[name] = (await attempts(id)).length;
    const before = { v4: v4.connections, v6: v6.connections, v4Received: v4.received.length, v6Received: v6.received.length };
    expect((await sendSandbox()).status).toBe(202);

    const expected: Record<string, string> = {
      loopback: '127.0.0.1 is loopback',
      ipv6: '::1 is loopback',
      mapped: 'IPv4-mapped form of 127.0.0.1, which is loopback',
      decimal: '127.0.0.1 is loopback',
      named: 'private.test resolves to 127.0.0.1, which is loopback',
      private: '10.0.0.1 is private',
      rebind: 'rebind.test resolves to 127.0.0.1, which is loopback',
      meta: 'meta.test resolves to 169.254.169.254, which is a cloud metadata address',
    };
    for (const [name, why] of Object.entries(expected)) {
      const attempt = await attemptAfter(stored[name]!, seen[name]!);
      expect(attempt, name).toMatchObject({ status_code: null, result: 'retrying' });
      expect(attempt.error, name).toContain('is refused');
      expect(attempt.error, name).toContain(why);
    }
    expect(v4.connections).toBe(before.v4);
    expect(v6.connections).toBe(before.v6);
    expect(v4.received.length).toBe(before.v4Received);
    expect(v6.received.length).toBe(before.v6Received);
  });
});
