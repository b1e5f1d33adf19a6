// Warmup and the per-domain breaker end to end, time moved by configuration (a ramp "day" of
// seconds), with real MX hosts on loopback: a new domain's first day holds its tiny cap and the
// rest is deferred to the next day, delivered then, nothing bounced; the caps used survive a
// SIGKILL and the operator's skip lets the held mail go; a burst of bounces from one domain
// opens that domain's breaker only, holding its mail while the tenant's other domain sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';

let gp: GatepostProcess;
let dns: DnsServer;
const mx: Record<'ok' | 'refuse', MxHost> = {} as never;
type Tenant = Awaited<ReturnType<GatepostProcess['tenant']>>;
type Sender = Tenant & { domain: string; domainId: string };

/** Day 1's cap, and day 2's (the ramp doubles). */
const START = 2;

beforeAll(async () => {
  const port = await freePort();
  mx.ok = await startMx('127.0.0.2', port);
  mx.refuse = await startMx('127.0.0.4', port, { verdict: () => ({ code: 550, text: '5.1.1 No such user here' }) });
  dns = await startDns({
    'mx-ok.test': { A: [mx.ok.ip] },
    'ok.test': { MX: [{ exchange: 'mx-ok.test', priority: 10 }] },
    'mx-refuse.test': { A: [mx.refuse.ip] },
    'refuse.test': { MX: [{ exchange: 'mx-refuse.test', priority: 10 }] },
    // Two mailbox providers, by their MX hosts' names (mta/provider.ts), both on the loopback sink.
    'aspmx.l.google.com': { A: [mx.ok.ip] },
    'gmail.test': { MX: [{ exchange: 'aspmx.l.google.com', priority: 10 }] },
    'outlook-test.mail.protection.outlook.com': { A: [mx.ok.ip] },
    'outlook.test': { MX: [{ exchange: 'outlook-test.mail.protection.outlook.com', priority: 10 }] },
  });
  gp = await startGatepost({
    env: {
      GATEPOST_DNS_SERVERS: dns.address,
      GATEPOST_MX_PORT: String(port),
      GATEPOST_WARMUP: 'true',
      GATEPOST_WARMUP_START: String(START),
      GATEPOST_WARMUP_GROWTH: '2',
      // A ramp day of eight seconds, one window a day.
      GATEPOST_WARMUP_DAY: '8s',
      GATEPOST_WARMUP_WINDOW: '8s',
      // One provider may take the whole cap, but in the test about providers.
      GATEPOST_WARMUP_PROVIDER_SHARE: '100',
      GATEPOST_BREAKER_MIN_SAMPLE: '4',
      GATEPOST_BREAKER_BOUNCE_WARN: '40',
      GATEPOST_BREAKER_BOUNCE_OPEN: '60',
      GATEPOST_BREAKER_COOLDOWN: '3s',
    },
  });
});

afterAll(async () => {
  await gp?.dispose();
  await Promise.all(Object.values(mx).map((h) => h.close()));
  await dns?.close();
});

async function sender(t?: Tenant, label = 'a'): Promise<Sender> {
  const tenant = t ?? (await gp.tenant());
  const domain = `${label}-${tenant.id.slice(-8)}.sender.example`;
  const view = await verifiedDomainOver(gp, dns, tenant.live, domain);
  return { ...tenant, domain, domainId: view.id };
}

async function send(t: Sender, to: string, stream = 'transactional'): Promise<string> {
  const res = await gp.request('POST', '/v1/emails', {
    key: t.live,
    body: { from: `App <app@${t.domain}>`, to, subject: 'Warmup', html: '<p>w</p>', stream },
  });
  expect(res.status).toBe(202);
  return res.body.id;
}

const message = async (t: Tenant, id: string) => (await gp.request('GET', `/v1/messages/${id}`, { key: t.live })).body;
const settled = (t: Tenant, id: string, status: string) =>
  eventually(async () => ((await message(t, id)).status === status ? message(t, id) : undefined), 45_000);
const acceptedAt = (m: { events: Array<{ type: string; data: { accepted_at: string } }> }) =>
  Date.parse(m.events.find((e) => e.type === 'email.sent')!.data.accepted_at);
const warmupOf = async (t: Sender) => (await gp.request('GET', `/v1/domains/${t.domainId}`, { key: t.live })).body.warmup;
const reputation = async (t: Tenant) => (await gp.request('GET', '/v1/reputation', { key: t.live })).body;

describe('warmup', () => {
  it("holds a new domain's first day to its cap, defers the rest to the next day and delivers it there, bouncing nothing", async () => {
    const t = await sender();
    expect(await warmupOf(t)).toMatchObject({ status: 'warming', day: 1, daily_cap: START, used_today: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send(t, `reader${i}@ok.test`));
    // The first day full: its end is when the rest may go.
    const full = await eventually(async () => {
      const w = await warmupOf(t);
      return w.day === 1 && w.used_today === START ? w : undefined;
    });
    const dayEnd = Date.parse(full.next_window);
    const sent = await Promise.all(ids.map((id) => settled(t, id, 'sent')));
    const times = sent.map(acceptedAt);
    expect(times.filter((at) => at < dayEnd)).toHaveLength(START);
    expect(times.filter((at) => at >= dayEnd)).toHaveLength(5 - START);
    expect(sent.flatMap((m) => m.events.map((e: { type: string }) => e.type))).not.toContain('email.bounced');
    expect(await warmupOf(t)).toMatchObject({ status: 'warming', daily_cap: 2 * START });
  });

  it("keeps the caps used through a SIGKILL; the operator's skip lets the held mail go; bad admin input is refused", async () => {
    // A ramp day of an hour (nothing rolls over while the process restarts) in windows of five
    // seconds: mail over the day's cap asks again each window, and goes once the operator skips.
    gp.setEnv({ GATEPOST_WARMUP_DAY: '1h', GATEPOST_WARMUP_WINDOW: '5s' });
    await gp.restart();
    const t = await sender();
    const ids: string[] = [];
    for (let i = 0; i < START + 1; i++) ids.push(await send(t, `kept${i}@ok.test`));
    // Two go (whichever the dispatch takes first); the third is over the day's cap.
    const statuses = () => Promise.all(ids.map(async (id) => (await message(t, id)).status as string));
    const split = await eventually(async () => {
      const now = await statuses();
      return now.filter((x) => x === 'sent').length === START ? now : undefined;
    });
    const heldId = ids[split.indexOf('queued')]!;
    expect(await warmupOf(t)).toMatchObject({ status: 'warming', day: 1, daily_cap: START, used_today: START });

    await gp.kill();
    await gp.start();
    expect(await warmupOf(t)).toMatchObject({ day: 1, daily_cap: START, used_today: START });
    expect((await message(t, heldId)).status).toBe('queued');

    const admin = (body: unknown, tenant = t.id, domain = t.domainId) =>
      gp.admin('POST', `/tenants/${tenant}/domains/${domain}/warmup`, body);
    for (const bad of [{ action: 'restart', day: 0 }, { action: 'restart', day: -3 }, { action: 'warm' }, {}]) {
      const res = await admin(bad);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const other = await gp.tenant();
    for (const [tenant, domain] of [
      ['ten_00000000000000000000000000', t.domainId],
      [other.id, t.domainId],
    ]) {
      const res = await admin({ action: 'skip' }, tenant, domain);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }

    const skipped = await admin({ action: 'skip' });
    expect(skipped.status).toBe(200);
    expect(skipped.body).toMatchObject({ status: 'warm', daily_cap: null });
    await settled(t, heldId, 'sent');

    const restarted = await admin({ action: 'restart', day: 3 });
    expect(restarted.body).toMatchObject({ status: 'warming', day: 3, daily_cap: START * 4, used_today: 0 });
  });
});

describe('a share per destination provider', () => {
  it("keeps one provider to its share of a new domain's day while another provider's mail goes, and sends the rest the next day", async () => {
    // Day 1's cap of 4 in one window of eight seconds, half of it for each provider.
    gp.setEnv({
      GATEPOST_WARMUP_START: '4',
      GATEPOST_WARMUP_DAY: '8s',
      GATEPOST_WARMUP_WINDOW: '8s',
      GATEPOST_WARMUP_PROVIDER_SHARE: '50',
    });
    await gp.restart();
    const t = await sender(undefined, 'prov');
    const google: string[] = [];
    for (let i = 0; i < 4; i++) google.push(await send(t, `g${i}@gmail.test`));
    const microsoft = [await send(t, 'm0@outlook.test'), await send(t, 'm1@outlook.test')];
    const full = await eventually(async () => {
      const w = await warmupOf(t);
      return w.day === 1 && w.used_today === 4 ? w : undefined;
    });
    // The domain's view shows each provider's half of the day used up.
    expect(full.providers).toEqual([
      { provider: 'google', daily_cap: 2, window_cap: 2, used_today: 2, used_this_window: 2 },
      { provider: 'microsoft', daily_cap: 2, window_cap: 2, used_today: 2, used_this_window: 2 },
    ]);
    const dayEnd = Date.parse(full.next_window);
    const times = async (ids: string[]) => (await Promise.all(ids.map((id) => settled(t, id, 'sent')))).map(acceptedAt);
    // Google's half of day 1 went, and Microsoft's, though Google's mail was sent first.
    const [g, m] = [await times(google), await times(microsoft)];
    expect(g.filter((at) => at < dayEnd)).toHaveLength(2);
    expect(g.filter((at) => at >= dayEnd)).toHaveLength(2);
    expect(m.filter((at) => at < dayEnd)).toHaveLength(2);
  });
});

describe('breaker per sending domain', () => {
  it("a burst of bounces from one domain opens its breaker only: its mail waits out the cool-down while the tenant's other domain sends", async () => {
    const good = await sender(undefined, 'good');
    const bad = await sender(good, 'bad');
    for (const s of [good, bad])
      expect((await gp.admin('POST', `/tenants/${s.id}/domains/${s.domainId}/warmup`, { action: 'skip' })).status).toBe(200);
    // Eight accepted from one domain, then four hard bounces from the other: 33 % for the tenant
    // (warns at 40 %), 100 % for the bad domain (opens at 60 %).
    for (let i = 0; i < 8; i++) await settled(good, await send(good, `fine${i}@ok.test`), 'sent');
    const bounces = await Promise.all(Array.from({ length: 4 }, (_, i) => send(bad, `gone${i}@refuse.test`)));
    for (const id of bounces) await settled(bad, id, 'bounced');
    const open = await eventually(async () => {
      const r = await reputation(good);
      return r.domains.find((d: { domain: string; status: string }) => d.domain === bad.domain && d.status === 'open')
        ? r
        : undefined;
    });
    expect(open).toMatchObject({ status: 'closed', window: { sample: 12, hard_bounces: 4 } });
    const badView = open.domains.find((d: { domain: string }) => d.domain === bad.domain);
    expect(badView).toMatchObject({ window: { sample: 4, hard_bounces: 4 } });
    expect(open.domains.find((d: { domain: string }) => d.domain === good.domain)).toMatchObject({ status: 'closed' });

    // Sent while the bad domain's breaker is open: its broadcast waits for the half-open moment;
    // the good domain's mail goes as usual.
    const held = await send(bad, 'later@ok.test', 'broadcast');
    await settled(good, await send(good, 'now@ok.test', 'broadcast'), 'sent');
    const late = await settled(bad, held, 'sent');
    expect(acceptedAt(late)).toBeGreaterThanOrEqual(Date.parse(badView.half_open_at));
  });
});
