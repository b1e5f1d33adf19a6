// Direct delivery against real MX hosts on loopback, named by a real DNS server on loopback: what
// each answer, silence or misbehaviour becomes as a DeliveryReport, the fall-backs of RFC 5321
// §5.1 and RFC 7505, and connections reused and capped per MX host, and an idle host's pool dropped.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dnsResolver } from '../lib/dns.ts';
import { composeRaw } from '../mail/mime.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { freePort, startMisbehavingMx, startMx, type MxHost, type ScriptedHost } from '../test/harness/mx.harness.ts';
import { directTransport } from './direct.smtp.ts';
import type { Transport } from './transport.ts';

let dns: DnsServer;
let transport: Transport;
/** The port every MX host here listens on. */
let port: number;
const hosts: { ok?: MxHost; defer?: MxHost; refuse?: MxHost; block?: MxHost; refuseMail?: MxHost; refuseData?: MxHost } = {};
const scripted: ScriptedHost[] = [];

const mx = (exchange: string, priority = 10) => ({ MX: [{ exchange, priority }] });

beforeAll(async () => {
  port = await freePort();
  hosts.ok = await startMx('127.0.0.2', port, { starttls: true });
  hosts.defer = await startMx('127.0.0.3', port, { verdict: () => ({ code: 451, text: '4.3.0 Try again later' }) });
  hosts.refuse = await startMx('127.0.0.4', port, { verdict: () => ({ code: 550, text: '5.1.1 No such user here' }) });
  hosts.block = await startMx('127.0.0.5', port, { verdict: () => ({ code: 554, text: '5.7.1 Listed at a blocklist' }) });
  hosts.refuseMail = await startMx('127.0.0.10', port, {
    mailVerdict: () => ({ code: 553, text: '5.1.8 Sender domain has no MX' }),
  });
  hosts.refuseData = await startMx('127.0.0.11', port, { dataVerdict: () => ({ code: 552, text: '5.3.4 Message too big' }) });
  scripted.push(
    await startMisbehavingMx('127.0.0.6', port, 'stall'),
    await startMisbehavingMx('127.0.0.7', port, 'close-mid-data'),
    await startMisbehavingMx('127.0.0.8', port, 'garbage'),
  );
  dns = await startDns({
    'mx-ok.test': { A: ['127.0.0.2'] },
    'mx-defer.test': { A: ['127.0.0.3'] },
    'mx-refuse.test': { A: ['127.0.0.4'] },
    'mx-block.test': { A: ['127.0.0.5'] },
    'mx-stall.test': { A: ['127.0.0.6'] },
    'mx-drop.test': { A: ['127.0.0.7'] },
    'mx-garbage.test': { A: ['127.0.0.8'] },
    'mx-down.test': { A: ['127.0.0.9'] }, // nothing listens there
    'mx-refuse-mail.test': { A: ['127.0.0.10'] },
    'mx-refuse-data.test': { A: ['127.0.0.11'] },
    'refuse-mail.test': mx('mx-refuse-mail.test'),
    'refuse-data.test': mx('mx-refuse-data.test'),
    'ok.test': mx('mx-ok.test'),
    'defer.test': mx('mx-defer.test'),
    'refuse.test': mx('mx-refuse.test'),
    'block.test': mx('mx-block.test'),
    'stall.test': mx('mx-stall.test'),
    'drop.test': mx('mx-drop.test'),
    'garbage.test': mx('mx-garbage.test'),
    'fallback.test': {
      MX: [
        { exchange: 'mx-ok.test', priority: 20 },
        { exchange: 'mx-down.test', priority: 10 },
        { exchange: 'mx-ghost.test', priority: 5 }, // named, but not in DNS
      ],
    },
    'no-mx.test': { A: ['127.0.0.2'] },
    'null-mx.test': { MX: [{ exchange: '.', priority: 0 }] },
    'no-address.test': {},
    'ghost-only.test': mx('mx-ghost.test'),
  });
  transport = directTransport({
    resolver: dnsResolver([dns.address]),
    port,
    hostname: 'gatepost.test',
    maxConnections: 2,
    timeouts: { connectMs: 2_000, greetingMs: 2_000, commandMs: 1_000 },
  });
});

afterAll(async () => {
  await transport?.close();
  await Promise.all([...Object.values(hosts), ...scripted].map((h) => h.close()));
  await dns?.close();
});

let n = 0;
async function send(to: string, from = 'ann@sender.example', through = transport) {
  const raw = await composeRaw(
    { from, to, reply_to: null, subject: `s${++n}`, html: '<p>hello</p>', text: null, headers: {} },
    { messageId: `<m${n}@sender.example>`, date: new Date() },
  );
  return through.send({ from, to: [to], raw });
}

describe('direct delivery', () => {
  it('delivers to the MX host over STARTTLS, with EHLO as GATEPOST_HOSTNAME, and reports who answered over what', async () => {
    const report = await send('bob@ok.test');
    expect(report).toMatchObject({
      result: 'accepted',
      reply: { code: 250, text: expect.stringContaining('Queued as q1') },
      mx: 'mx-ok.test',
      ip: '127.0.0.2',
      tls: { version: expect.stringMatching(/^TLSv1\.[23]$/), cipher: expect.any(String) },
    });
    expect(Date.parse(report.accepted_at!)).toBeGreaterThanOrEqual(Date.parse(report.connected_at!));
    const got = hosts.ok!.received.at(-1)!;
    expect(got).toMatchObject({ from: 'ann@sender.example', to: ['bob@ok.test'], ehlo: 'gatepost.test' });
    expect(got.cipher).toBe(report.tls!.cipher);
    expect(got.parsed.subject).toBe(`s${n}`);
  });

  it('4xx is transient, 5.1.1 permanent, 5.7.1 permanent with its enhanced code, each with the whole reply', async () => {
    expect(await send('bob@defer.test')).toMatchObject({
      result: 'transient',
      reply: { code: 451, enhanced: '4.3.0', text: '451 4.3.0 Try again later' },
      mx: 'mx-defer.test',
      ip: '127.0.0.3',
      tls: null,
    });
    expect(await send('bob@refuse.test')).toMatchObject({
      result: 'permanent',
      reply: { code: 550, enhanced: '5.1.1', text: '550 5.1.1 No such user here' },
      mx: 'mx-refuse.test',
    });
    expect(await send('bob@block.test')).toMatchObject({
      result: 'permanent',
      reply: { code: 554, enhanced: '5.7.1', text: '554 5.7.1 Listed at a blocklist' },
    });
  });

  it('says at which stage a refusal came: MAIL FROM, RCPT TO, the end of DATA; none for an acceptance', async () => {
    expect(await send('bob@ok.test')).toMatchObject({ result: 'accepted', stage: null });
    expect(await send('bob@refuse-mail.test')).toMatchObject({
      result: 'permanent',
      stage: 'mail',
      reply: { code: 553, enhanced: '5.1.8' },
    });
    expect(await send('bob@refuse.test')).toMatchObject({ result: 'permanent', stage: 'rcpt', reply: { code: 550 } });
    expect(await send('bob@refuse-data.test')).toMatchObject({
      result: 'permanent',
      stage: 'data',
      reply: { code: 552, enhanced: '5.3.4' },
    });
    expect(hosts.refuseData!.received).toHaveLength(0);
    expect(await send('bob@defer.test')).toMatchObject({ result: 'transient', stage: 'rcpt' });
    expect(await send('bob@null-mx.test')).toMatchObject({ result: 'permanent', stage: 'connect' });
  });

  it('a host that stalls, closes mid-DATA or answers garbage defers the message', async () => {
    const stall = await send('bob@stall.test');
    expect(stall).toMatchObject({ result: 'transient', mx: 'mx-stall.test', ip: '127.0.0.6', reply: { code: null } });
    expect(stall.reply.text).toMatch(/timeout/i);
    const drop = await send('bob@drop.test');
    expect(drop).toMatchObject({ result: 'transient', mx: 'mx-drop.test', reply: { code: null } });
    expect(drop.reply.text).toMatch(/closed/i);
    // Garbage in place of a greeting: no session, so the host is passed over like an unreachable one.
    const garbage = await send('bob@garbage.test');
    expect(garbage).toMatchObject({ result: 'transient', mx: null, reply: { code: null } });
    expect(garbage.reply.text).toContain('mx-garbage.test');
  });

  it('skips MX hosts with no address or no listener, in preference order, and delivers to the next', async () => {
    const report = await send('bob@fallback.test');
    expect(report).toMatchObject({ result: 'accepted', mx: 'mx-ok.test', ip: '127.0.0.2' });
    const asked = dns.queries.filter((q) => q.startsWith('mx-'));
    expect(asked.indexOf('mx-ghost.test A')).toBeLessThan(asked.indexOf('mx-down.test A'));
  });

  it('delivers to the domain itself when it has no MX (RFC 5321 §5.1)', async () => {
    expect(await send('bob@no-mx.test')).toMatchObject({ result: 'accepted', mx: 'no-mx.test', ip: '127.0.0.2' });
  });

  it('a null MX, a domain that does not exist, or one with no MX and no address is permanent; MX hosts with no address are transient', async () => {
    expect(await send('bob@null-mx.test')).toMatchObject({
      result: 'permanent',
      mx: null,
      reply: { code: null, text: expect.stringContaining('null MX') },
    });
    expect(await send('bob@nowhere.test')).toMatchObject({
      result: 'permanent',
      reply: { text: expect.stringContaining('does not exist') },
    });
    expect(await send('bob@no-address.test')).toMatchObject({
      result: 'permanent',
      reply: { text: expect.stringContaining('no MX and no address') },
    });
    expect(await send('bob@ghost-only.test')).toMatchObject({
      result: 'transient',
      reply: { text: expect.stringContaining('mx-ghost.test: no address') },
    });
  });

  it('reuses connections per MX host and opens no more than the cap', async () => {
    const before = hosts.ok!.connections;
    const reports = await Promise.all(Array.from({ length: 8 }, (_, i) => send(`r${i}@ok.test`)));
    expect(reports.every((r) => r.result === 'accepted')).toBe(true);
    // The cap is 2, and a connection from an earlier test may be idle in the pool: at most 2 new ones.
    expect(hosts.ok!.connections - before).toBeLessThanOrEqual(2);
    const again = hosts.ok!.connections;
    await send('once-more@ok.test');
    expect(hosts.ok!.connections).toBe(again);
  });

  it("closes and drops an MX host's pool once it has stood idle; the next message to the host opens a new one", async () => {
    const idle = await startMx('127.0.0.12', port);
    dns.records.set('mx-idle.test', { A: ['127.0.0.12'] });
    dns.records.set('idle.test', mx('mx-idle.test'));
    const short = directTransport({
      resolver: dnsResolver([dns.address]),
      port,
      hostname: 'gatepost.test',
      maxConnections: 2,
      timeouts: { connectMs: 2_000, greetingMs: 2_000, commandMs: 5_000 },
      poolIdleMs: 200,
    });
    try {
      expect((await send('a@idle.test', undefined, short)).result).toBe('accepted');
      expect(short.pooledHosts()).toEqual(['mx-idle.test']);
      expect(idle.connections).toBe(1);
      // Idle: the pool quits its connection and is dropped from the map.
      await vi.waitFor(() => expect(short.pooledHosts()).toEqual([]), { timeout: 10_000, interval: 50 });
      await vi.waitFor(() => expect(idle.closed).toBe(1), { timeout: 10_000, interval: 50 });
      expect((await send('b@idle.test', undefined, short)).result).toBe('accepted');
      expect(idle.connections).toBe(2);
      expect(short.pooledHosts()).toEqual(['mx-idle.test']);
    } finally {
      await short.close();
      await idle.close();
    }
  });
});
