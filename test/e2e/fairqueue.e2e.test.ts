// The per-tenant fair queue end to end: one MX host on loopback that takes one connection at a
// time (GATEPOST_MX_MAX_CONNECTIONS=1) and holds each message until the test lets it go, so a
// backlog waits in the queue. A quiet tenant's message sent beside a noisy tenant's backlog goes
// out within the documented bound (one slot of the backlog besides the one in flight), long
// before the backlog drains; the queue is visible to the operator and, its own rows, to the
// tenant; weights are set and bad ones refused; the gauges show the queue and the breakers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { ADMIN_TOKEN, eventually, startGatepost, TEST_RUNTIME, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';

// On Dapr the queue lives in the actor host, which tells it to the catalog for the ingress's
// GET /v1/queue and /v1/admin/queue (app/queue.shared.ts); its /metrics, which this harness does
// not reach, is the actor host's own: the gauges' test runs on the embedded runtime only.
const embedded = TEST_RUNTIME === 'embedded';
const BACKLOG = 20;

let gp: GatepostProcess;
let dns: DnsServer;
let busy: MxHost;
let refusing: MxHost;
type Tenant = Awaited<ReturnType<GatepostProcess['tenant']>> & { domain: string };

beforeAll(async () => {
  const port = await freePort();
  busy = await startMx('127.0.0.2', port);
  refusing = await startMx('127.0.0.4', port, { verdict: () => ({ code: 550, text: '5.1.1 No such user here' }) });
  dns = await startDns({
    'mx-busy.test': { A: [busy.ip] },
    'busy.test': { MX: [{ exchange: 'mx-busy.test', priority: 10 }] },
    'mx-refuse.test': { A: [refusing.ip] },
    'refuse.test': { MX: [{ exchange: 'mx-refuse.test', priority: 10 }] },
  });
  gp = await startGatepost({
    env: {
      GATEPOST_DNS_SERVERS: dns.address,
      GATEPOST_MX_PORT: String(port),
      GATEPOST_MX_MAX_CONNECTIONS: '1',
      GATEPOST_BREAKER_MIN_SAMPLE: '2',
    },
  });
});

afterAll(async () => {
  await gp?.dispose();
  await Promise.all([busy?.close(), refusing?.close()]);
  await dns?.close();
});

async function sender(): Promise<Tenant> {
  const t = await gp.tenant();
  const domain = `${t.id.slice(-8)}.sender.example`;
  await verifiedDomainOver(gp, dns, t.live, domain);
  return { ...t, domain };
}

async function send(t: Tenant, to: string, subject: string): Promise<string> {
  const res = await gp.request('POST', '/v1/emails', {
    key: t.live,
    body: { from: `App <app@${t.domain}>`, to, subject, html: '<p>q</p>' },
  });
  expect(res.status).toBe(202);
  return res.body.id;
}

interface Row {
  tenant_id: string;
  destination: string;
  waiting: number;
  in_flight: number;
  oldest_age_seconds: number;
}
const adminQueue = async (): Promise<Row[]> => (await gp.admin<{ data: Row[] }>('GET', '/queue')).body.data;
const rowOf = async (t: Tenant) => (await adminQueue()).find((r) => r.tenant_id === t.id && r.destination === 'busy.test');

/** A series' value on GET /metrics; undefined when it has none. */
async function sample(name: string, labels: string): Promise<number | undefined> {
  const text = await (await fetch(`${gp.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('the fair queue', () => {
  it('a quiet tenant’s message goes out beside a backlog, within the bound, long before the backlog drains', async () => {
    const noisy = await sender();
    const quiet = await sender();
    let release!: () => void;
    busy.hold = new Promise((resolve) => (release = resolve));
    const before = busy.dataStarted;

    await Promise.all(Array.from({ length: BACKLOG }, (_, i) => send(noisy, `reader${i}@busy.test`, `backlog ${i}`)));
    // The first holds the one connection; the rest wait in the queue.
    await eventually(() => busy.dataStarted === before + 1);
    await eventually(async () => (await rowOf(noisy))?.waiting === BACKLOG - 1);
    const quietId = await send(quiet, 'ann@busy.test', 'quiet');
    const waiting = await eventually(async () => ((await rowOf(quiet))?.waiting === 1 ? rowOf(quiet) : undefined));
    expect(waiting).toMatchObject({ in_flight: 0, oldest_age_seconds: expect.any(Number) });
    expect(await rowOf(noisy)).toMatchObject({ waiting: BACKLOG - 1, in_flight: 1 });

    // The tenant sees its own rows only.
    const own = await gp.request('GET', '/v1/queue', { key: quiet.live });
    expect(own.status).toBe(200);
    expect(own.body.data).toEqual([
      { tenant_id: quiet.id, destination: 'busy.test', waiting: 1, in_flight: 0, oldest_age_seconds: expect.any(Number) },
    ]);

    const from = busy.received.length;
    busy.hold = null;
    release();
    await eventually(() => busy.received.length === from + BACKLOG + 1, 60_000);
    const order = busy.received.slice(from).map((m) => m.parsed.subject);
    // The held one, at most Σ ⌈w⌉ of the others (one: the noisy tenant's weight), then the quiet one.
    expect(order.indexOf('quiet')).toBeLessThanOrEqual(2);
    expect(order.filter((s) => s !== 'quiet')).toHaveLength(BACKLOG);
    expect((await gp.request('GET', `/v1/messages/${quietId}`, { key: quiet.live })).body.status).toBe('sent');
    await eventually(async () => (await adminQueue()).every((r) => r.destination !== 'busy.test'));
  });

  it('a backlog waiting in the queue survives a SIGKILL: each message goes out after the restart', async () => {
    const t = await sender();
    let release!: () => void;
    busy.hold = new Promise((resolve) => (release = resolve));
    const before = busy.dataStarted;
    const ids = await Promise.all([0, 1, 2, 3, 4].map((i) => send(t, `kill${i}@busy.test`, `kill ${i}`)));
    await eventually(() => busy.dataStarted === before + 1);
    await eventually(async () => (await rowOf(t))?.waiting === 4);

    await gp.kill();
    busy.hold = null;
    release();
    await gp.start();
    // Each comes back by its message's watchdog (as long as it had waited, 30 s at least).
    const status = async (id: string) => (await gp.request('GET', `/v1/messages/${id}`, { key: t.live })).body;
    await eventually(async () => (await Promise.all(ids.map(status))).every((m) => m.status === 'sent'), 60_000);
    // The one the kill cut off mid-delivery went again, and says so; none of the others went twice.
    const timelines = await Promise.all(ids.map(status));
    const cut = timelines.filter((m) => JSON.stringify(m.events).includes('cut short by a restart'));
    expect(cut).toHaveLength(1);
    const subjects = busy.received.map((m) => m.parsed.subject).filter((s) => s?.startsWith('kill '));
    expect(new Set(subjects)).toEqual(new Set([0, 1, 2, 3, 4].map((i) => `kill ${i}`)));
    expect(subjects.length).toBeLessThanOrEqual(6);
  }, 90_000);

  it('sets a tenant’s weight, and refuses zero, negative or non-numeric weights and unknown tenants with coded errors', async () => {
    const t = await gp.tenant();
    const set = await gp.admin('PATCH', `/tenants/${t.id}`, { queue_weight: 2.5 });
    expect(set.status).toBe(200);
    expect(set.body.queue_weight).toBe(2.5);
    expect((await gp.admin('GET', `/tenants/${t.id}`)).body.queue_weight).toBe(2.5);
    expect((await gp.admin('GET', `/tenants/${(await gp.tenant()).id}`)).body.queue_weight).toBe(1);

    for (const queue_weight of [0, -1, '2', null, 1001]) {
      const bad = await gp.admin('PATCH', `/tenants/${t.id}`, { queue_weight });
      expect(bad.status, JSON.stringify(queue_weight)).toBe(400);
      expect(bad.body.error.code).toBe('invalid_request');
      expect(bad.body.error.details[0].field).toBe('queue_weight');
    }
    expect((await gp.admin('GET', `/tenants/${t.id}`)).body.queue_weight).toBe(2.5);
    const unknown = await gp.admin('PATCH', '/tenants/ten_nobody', { queue_weight: 2 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
  });

  it('shows the queue to the admin token only', async () => {
    const t = await gp.tenant();
    expect((await gp.request('GET', '/v1/admin/queue', { key: t.live })).status).toBe(401);
    expect((await gp.request('GET', '/v1/admin/queue', { key: ADMIN_TOKEN })).status).toBe(200);
  });

  it.runIf(embedded)('GET /metrics shows the queue per destination', async () => {
    const t = await sender();
    let release!: () => void;
    busy.hold = new Promise((resolve) => (release = resolve));
    const from = busy.received.length;
    await Promise.all([1, 2, 3].map((i) => send(t, `m${i}@busy.test`, `metrics ${i}`)));
    await eventually(
      async () => (await sample('gatepost_delivery_queue_messages', 'destination="busy.test",state="waiting"')) === 2,
    );
    expect(await sample('gatepost_delivery_queue_messages', 'destination="busy.test",state="in_flight"')).toBe(1);
    busy.hold = null;
    release();
    await eventually(() => busy.received.length === from + 3);
  });

  // On Dapr the API process gauges them from the catalog's mirror of each breaker's transitions.
  it('GET /metrics gauges each tenant’s breaker, on either runtime', async () => {
    // Two hard bounces make a sample of two (GATEPOST_BREAKER_MIN_SAMPLE), all bounced: open.
    const b = await sender();
    await Promise.all([send(b, 'gone1@refuse.test', 'b1'), send(b, 'gone2@refuse.test', 'b2')]);
    await eventually(async () => (await gp.request('GET', '/v1/reputation', { key: b.live })).body.status === 'open');
    await eventually(async () => (await sample('gatepost_reputation_breaker_state', `tenant="${b.id}"`)) === 2);
    expect((await gp.admin('POST', `/tenants/${b.id}/reputation/reset`)).status).toBe(200);
    await eventually(async () => (await sample('gatepost_reputation_breaker_state', `tenant="${b.id}"`)) === 0);
  });
});
