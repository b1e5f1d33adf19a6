// The reputation breaker end to end, with short windows set by configuration: a burst of 5.1.1
// hard bounces from a real refusing MX host opens a tenant's breaker (a tenant.reputation_changed
// webhook, GET /v1/reputation); a broadcast sent while it is open is kept and goes only once the
// cool-down has moved it to half-open; a clean sample then closes it. The state and its cool-down
// survive a SIGKILL, and the operator's reset closes it. A broadcast sent while it is open says
// it is paused, and why, and goes once the breaker half-opens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';
import { selfSignedCertificate, startReceiver, type Receiver } from '../harness/receiver.harness.ts';

let gp: GatepostProcess;
let dns: DnsServer;
let receiver: Receiver;
const mx: Record<'ok' | 'refuse', MxHost> = {} as never;
type Tenant = Awaited<ReturnType<GatepostProcess['tenant']>>;

/** Deliveries a sample needs here: four. */
const SAMPLE = 4;

beforeAll(async () => {
  const port = await freePort();
  mx.ok = await startMx('127.0.0.2', port);
  mx.refuse = await startMx('127.0.0.4', port, { verdict: () => ({ code: 550, text: '5.1.1 No such user here' }) });
  const cert = await selfSignedCertificate(['hooks.test'], []);
  dns = await startDns({
    'hooks.test': { A: ['127.0.0.1'] },
    'mx-ok.test': { A: [mx.ok.ip] },
    'ok.test': { MX: [{ exchange: 'mx-ok.test', priority: 10 }] },
    'mx-refuse.test': { A: [mx.refuse.ip] },
    'refuse.test': { MX: [{ exchange: 'mx-refuse.test', priority: 10 }] },
  });
  receiver = await startReceiver({ tls: cert, urlHost: 'hooks.test' });
  gp = await startGatepost({
    env: {
      GATEPOST_DNS_SERVERS: dns.address,
      GATEPOST_MX_PORT: String(port),
      NODE_EXTRA_CA_CERTS: cert.certFile,
      GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1',
      GATEPOST_BREAKER_MIN_SAMPLE: String(SAMPLE),
      GATEPOST_BREAKER_COOLDOWN: '3s',
    },
  });
});

afterAll(async () => {
  await gp?.dispose();
  await receiver?.close();
  await Promise.all(Object.values(mx).map((h) => h.close()));
  await dns?.close();
});

/** A tenant with a verified sending domain of its own and a webhook endpoint for its breaker's events. */
async function sender(): Promise<Tenant & { domain: string; path: string }> {
  const t = await gp.tenant();
  const domain = `${t.id.slice(-8)}.sender.example`;
  await verifiedDomainOver(gp, dns, t.live, domain);
  const path = `/${t.id}`;
  const hook = await gp.request('POST', '/v1/webhooks', {
    key: t.live,
    body: { url: `${receiver.url}${path}`, events: ['tenant.reputation_changed'] },
  });
  expect(hook.status).toBe(201);
  return { ...t, domain, path };
}

async function send(t: Tenant & { domain: string }, to: string, stream = 'transactional'): Promise<string> {
  const res = await gp.request('POST', '/v1/emails', {
    key: t.live,
    body: { from: `App <app@${t.domain}>`, to, subject: 'Breaker', html: '<p>b</p>', stream },
  });
  expect(res.status).toBe(202);
  return res.body.id;
}

const message = async (t: Tenant, id: string) => (await gp.request('GET', `/v1/messages/${id}`, { key: t.live })).body;
const settled = (t: Tenant, id: string, status: string) =>
  eventually(async () => ((await message(t, id)).status === status ? message(t, id) : undefined), 30_000);
const reputation = async (t: Tenant) => (await gp.request('GET', '/v1/reputation', { key: t.live })).body;
const breakerAt = (t: Tenant, status: string) =>
  eventually(async () => ((await reputation(t)).status === status ? reputation(t) : undefined), 30_000);

/**
 * The transitions the tenant's endpoint received of its own breaker (`domain` null) or of a sending
 * domain's, in order (redeliveries left out).
 */
function transitions(
  t: { path: string },
  domain: string | null = null,
): Array<{ from: string; to: string; reason: string; tenant_id: string; domain: string | null }> {
  const seen = new Set<string>();
  return receiver.received
    .filter((d) => d.path === t.path)
    .map((d) => JSON.parse(d.body))
    .filter((e) => e.type === 'tenant.reputation_changed' && e.data.domain === domain && !seen.has(e.id) && seen.add(e.id))
    .map((e) => e.data);
}

/** A burst of hard bounces, one a recipient, each settled. */
async function bounceBurst(t: Tenant & { domain: string }, tag: string): Promise<void> {
  const ids = await Promise.all(Array.from({ length: SAMPLE }, (_, i) => send(t, `gone-${tag}-${i}@refuse.test`)));
  for (const id of ids) await settled(t, id, 'bounced');
}

describe('reputation breaker', () => {
  it('a burst of 5.1.1 bounces opens it; a broadcast waits out the cool-down; a clean sample closes it', async () => {
    const t = await sender();
    expect(await reputation(t)).toMatchObject({ status: 'closed', window: { sample: 0 } });

    await bounceBurst(t, 'a');
    const open = await breakerAt(t, 'open');
    expect(open).toMatchObject({
      window: { sample: SAMPLE, hard_bounces: SAMPLE, bounce_rate: 1 },
      reason: expect.stringMatching(/^hard bounce rate 100 % over 4 deliveries \(opens at 8 %\)$/),
    });
    await eventually(() => transitions(t).length >= 1);
    expect(transitions(t)[0]).toMatchObject({ tenant_id: t.id, from: 'closed', to: 'open' });

    // Sent while open: admitted and kept, and delivered only once the breaker is half-open.
    const broadcast = await send(t, 'reader@ok.test', 'broadcast');
    const half = await breakerAt(t, 'half_open');
    expect(half.window.sample).toBe(0);
    const sent = (await settled(t, broadcast, 'sent')).events.find((e: { type: string }) => e.type === 'email.sent');
    expect(Date.parse(sent.data.accepted_at)).toBeGreaterThanOrEqual(Date.parse(open.half_open_at));
    expect(Date.parse(half.since)).toBeGreaterThanOrEqual(Date.parse(open.half_open_at));

    // The broadcast and three more accepted: a clean sample of four closes it.
    for (const i of [1, 2, 3]) await settled(t, await send(t, `reader${i}@ok.test`), 'sent');
    const closed = await breakerAt(t, 'closed');
    expect(closed).toMatchObject({ reason: 'a clean sample of 4 deliveries', window: { sample: SAMPLE, sent: SAMPLE } });
    await eventually(() => transitions(t).length >= 3);
    expect(transitions(t).map((x) => [x.from, x.to])).toEqual([
      ['closed', 'open'],
      ['open', 'half_open'],
      ['half_open', 'closed'],
    ]);
    // All the tenant's mail is from its one sending domain: that domain's breaker moved the same way.
    await eventually(() => transitions(t, t.domain).length >= 3);
    expect(transitions(t, t.domain).map((x) => [x.from, x.to])).toEqual(transitions(t).map((x) => [x.from, x.to]));
    expect((await reputation(t)).domains).toMatchObject([{ domain: t.domain, status: 'closed' }]);
  });

  it('pauses a broadcast while the breaker is open, saying why, and resumes it when the breaker half-opens', async () => {
    const t = await sender();
    await bounceBurst(t, 'c');
    const open = await breakerAt(t, 'open');
    const request = (method: string, path: string, body?: unknown) => gp.request(method, path, { key: t.live, body });
    const audience = (await request('POST', '/v1/audiences', { name: 'Readers' })).body.id;
    const readers = ['one', 'two', 'three'].map((n) => `${n}-${t.id.slice(-6)}@ok.test`);
    for (const email of readers)
      expect((await request('POST', `/v1/audiences/${audience}/contacts`, { email })).status).toBe(201);
    const made = await request('POST', '/v1/broadcasts', {
      name: 'While open',
      audience_id: audience,
      from: `App <app@${t.domain}>`,
      subject: 'News',
      html: '<p>News</p>',
    });
    expect((await request('POST', `/v1/broadcasts/${made.body.id}/send`)).status).toBe(200);
    const broadcast = async () => (await request('GET', `/v1/broadcasts/${made.body.id}`)).body;

    const paused = await eventually(async () => ((await broadcast()).status === 'paused' ? broadcast() : undefined), 30_000);
    expect(paused.paused.reason).toMatch(/^the tenant's reputation breaker is open: hard bounce rate 100 % over 4 deliveries/);
    expect(Date.parse(paused.paused.until)).toBeGreaterThanOrEqual(Date.parse(open.half_open_at));
    expect(paused.progress.admitted).toBe(0);
    expect((await request('GET', '/v1/broadcasts')).body.data[0]).toMatchObject({ id: made.body.id, status: 'paused' });

    // The cool-down ends: the breaker half-opens and the broadcast's reminder sends it.
    const sent = await eventually(async () => {
      const b = await broadcast();
      return b.status === 'sent' && b.results.sent === readers.length && b;
    }, 30_000);
    expect(sent.paused).toBeNull();
    expect(sent.progress.admitted).toBe(readers.length);
    expect(Date.parse(sent.progress.finished_at)).toBeGreaterThanOrEqual(Date.parse(open.half_open_at));
  });

  it('an open breaker survives a SIGKILL; the admin reset closes it; an unknown tenant is refused', async () => {
    const t = await sender();
    await bounceBurst(t, 'b');
    const open = await breakerAt(t, 'open');
    // Both breakers' openings delivered before the kill: what must come through it is their
    // state and their cool-downs' reminders. (On Dapr an event its host saved but had not yet
    // published when killed goes out with the ledger's sweep, which can take over a minute:
    // test/dapr/pitfalls.dapr.test.ts proves that.)
    await eventually(() => transitions(t).length >= 1 && transitions(t, t.domain).length >= 1);
    await gp.kill();
    await gp.start();
    // The state and its cool-down's reminder came through: it goes half-open, not back to closed.
    const half = await breakerAt(t, 'half_open');
    expect(Date.parse(half.since)).toBeGreaterThanOrEqual(Date.parse(open.half_open_at));
    await eventually(() => transitions(t).length >= 2, 30_000);
    expect(transitions(t).map((x) => x.to)).toEqual(['open', 'half_open']);
    // The sending domain's breaker, and its own cool-down's reminder, came through as well.
    await eventually(() => transitions(t, t.domain).length >= 2, 30_000);
    expect(transitions(t, t.domain).map((x) => x.to)).toEqual(['open', 'half_open']);

    const reset = await gp.admin('POST', `/tenants/${t.id}/reputation/reset`);
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ status: 'closed', reason: 'reset by the operator', window: { sample: 0 } });
    expect(await reputation(t)).toMatchObject({ status: 'closed' });
    await eventually(() => transitions(t).some((x) => x.to === 'closed'));
    expect(transitions(t).at(-1)).toMatchObject({ from: 'half_open', to: 'closed', reason: 'reset by the operator' });

    const unknown = await gp.admin('POST', '/tenants/ten_00000000000000000000000000/reputation/reset');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
  });
});
