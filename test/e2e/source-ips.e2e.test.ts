// Warmup per source address end to end (GATEPOST_SOURCE_IPS), time moved by configuration (a ramp
// "day" of seconds), with a real MX host on loopback that records the address each message came
// from: each address holds its own day's cap, the rest is deferred to its next day and delivered
// then, from the listed addresses only, nothing bounced; the counts survive a SIGKILL; the
// operator sees each address's ramp and may skip or restart it; a bad list fails the start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifiedDomainOver } from '../harness/domains.harness.ts';
import { EmbeddedProcess, eventually, startGatepost, tempDir, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { freePort, startMx, type MxHost } from '../harness/mx.harness.ts';

const SOURCES = ['127.0.0.2', '127.0.0.3'];
/** Day 1's cap of each address; day 2's is twice it. */
const START = 2;

let gp: GatepostProcess;
let dns: DnsServer;
let mx: MxHost;
type Sender = Awaited<ReturnType<GatepostProcess['tenant']>> & { domain: string };
let t: Sender;

interface SourceIpView {
  ip: string;
  status: string;
  day: number | null;
  daily_cap: number | null;
  used_today: number;
  next_window: string | null;
}

beforeAll(async () => {
  const port = await freePort();
  mx = await startMx('127.0.0.5', port);
  dns = await startDns({
    'mx-ok.test': { A: [mx.ip] },
    'ok.test': { MX: [{ exchange: 'mx-ok.test', priority: 10 }] },
  });
  gp = await startGatepost({
    env: {
      GATEPOST_DNS_SERVERS: dns.address,
      GATEPOST_MX_PORT: String(port),
      GATEPOST_SOURCE_IPS: SOURCES.join(', '),
      GATEPOST_WARMUP: 'true',
      GATEPOST_WARMUP_START: String(START),
      GATEPOST_WARMUP_GROWTH: '2',
      // A ramp day of eight seconds, one window a day.
      GATEPOST_WARMUP_DAY: '8s',
      GATEPOST_WARMUP_WINDOW: '8s',
    },
  });
  const tenant = await gp.tenant();
  const domain = `ips-${tenant.id.slice(-8)}.sender.example`;
  const view = await verifiedDomainOver(gp, dns, tenant.live, domain);
  // The domain is warm: the caps that hold are the addresses'.
  expect((await gp.admin('POST', `/tenants/${tenant.id}/domains/${view.id}/warmup`, { action: 'skip' })).status).toBe(200);
  t = { ...tenant, domain };
});

afterAll(async () => {
  await gp?.dispose();
  await mx?.close();
  await dns?.close();
});

async function send(to: string): Promise<string> {
  const res = await gp.request('POST', '/v1/emails', {
    key: t.live,
    body: { from: `App <app@${t.domain}>`, to, subject: 'Source', html: '<p>s</p>' },
  });
  expect(res.status).toBe(202);
  return res.body.id;
}

const message = async (id: string) => (await gp.request('GET', `/v1/messages/${id}`, { key: t.live })).body;
const settled = (id: string, status: string) =>
  eventually(async () => ((await message(id)).status === status ? message(id) : undefined), 45_000);
const sources = async (): Promise<SourceIpView[]> => (await gp.admin('GET', '/source-ips')).body.data;
const from = (ip: string) => mx.received.filter((r) => r.remoteAddress === ip);

describe('warmup per source address', () => {
  it("holds each address's first day to its cap, defers the rest to the next day and delivers it from the listed addresses, bouncing nothing", async () => {
    expect(await sources()).toEqual(
      SOURCES.map((ip) => expect.objectContaining({ ip, status: 'warming', day: 1, daily_cap: START, used_today: 0 })),
    );
    const ids: string[] = [];
    for (let i = 0; i < 3 * START; i++) ids.push(await send(`reader${i}@ok.test`));
    // Both addresses' first days full: each day's end is when the rest may go from it.
    const full = await eventually(async () => {
      const views = await sources();
      return views.every((v) => v.day === 1 && v.used_today === START) ? views : undefined;
    });
    const sent = await Promise.all(ids.map((id) => settled(id, 'sent')));
    expect(sent.flatMap((m) => m.events.map((e: { type: string }) => e.type))).not.toContain('email.bounced');

    expect(mx.received).toHaveLength(3 * START);
    expect(new Set(mx.received.map((r) => r.remoteAddress))).toEqual(new Set(SOURCES));
    // Each message's timeline names the address it went from, the one the MX host saw.
    for (const m of sent) {
      const event = m.events.find((e: { type: string }) => e.type === 'email.sent');
      const received = mx.received.find((r) => r.to.includes(event.data.to));
      expect(event.data.source_ip).toBe(received!.remoteAddress);
    }
    for (const view of full) {
      const dayEnd = Date.parse(view.next_window!);
      // Its first day took its cap and not one more.
      expect(from(view.ip).filter((r) => r.at < dayEnd)).toHaveLength(START);
    }
    // Four went on the first days, the other two on a second.
    expect(mx.received.filter((r) => r.at >= Math.min(...full.map((v) => Date.parse(v.next_window!))))).toHaveLength(START);
  });

  it("keeps each address's counts through a SIGKILL; the operator's skip lets the held mail go; bad admin input is refused", async () => {
    // A ramp day of an hour (nothing rolls over while the process restarts) in windows of five
    // seconds: mail over the day's cap asks again each window, and goes once the operator skips.
    gp.setEnv({ GATEPOST_WARMUP_DAY: '1h', GATEPOST_WARMUP_WINDOW: '5s' });
    await gp.restart();
    for (const ip of SOURCES) {
      const restarted = await gp.admin('POST', `/source-ips/${ip}/warmup`, { action: 'restart' });
      expect(restarted.status).toBe(200);
      expect(restarted.body).toMatchObject({ ip, status: 'warming', day: 1, daily_cap: START, used_today: 0 });
    }
    const ids: string[] = [];
    for (let i = 0; i < 2 * START + 1; i++) ids.push(await send(`kept${i}@ok.test`));
    const statuses = () => Promise.all(ids.map(async (id) => (await message(id)).status as string));
    const split = await eventually(async () => {
      const now = await statuses();
      return now.filter((x) => x === 'sent').length === 2 * START ? now : undefined;
    });
    const heldId = ids[split.indexOf('queued')]!;

    await gp.kill();
    await gp.start();
    expect(await sources()).toEqual(SOURCES.map((ip) => expect.objectContaining({ ip, day: 1, used_today: START })));
    expect((await message(heldId)).status).toBe('queued');

    for (const bad of [{ action: 'restart', day: 0 }, { action: 'warm' }, {}]) {
      const res = await gp.admin('POST', `/source-ips/${SOURCES[0]}/warmup`, bad);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const unknown = await gp.admin('POST', '/source-ips/127.0.0.9/warmup', { action: 'skip' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');

    const [cold, warm] = SOURCES.map((ip) => from(ip).length);
    const skipped = await gp.admin('POST', `/source-ips/${SOURCES[1]}/warmup`, { action: 'skip' });
    expect(skipped.body).toMatchObject({ ip: SOURCES[1], status: 'warm', daily_cap: null });
    await settled(heldId, 'sent');
    // It went from the address skipped, the only one with room.
    expect(SOURCES.map((ip) => from(ip).length)).toEqual([cold, warm! + 1]);
  });

  it('refuses to start with an address that is not one, or not one of this machine', async () => {
    for (const [list, said] of [
      ['127.0.0.2, mail.example', 'GATEPOST_SOURCE_IPS: mail.example is not an IP address'],
      // TEST-NET-1 (RFC 5737): no machine has it.
      ['192.0.2.77', 'GATEPOST_SOURCE_IPS: 192.0.2.77 is not an address of this machine'],
    ] as const) {
      const gp2 = new EmbeddedProcess(tempDir(), { GATEPOST_SOURCE_IPS: list, GATEPOST_WARMUP: 'false' });
      await expect(gp2.start()).rejects.toThrow(said);
    }
  });
});
