// The DeliveryActor with direct delivery to MX hosts on loopback: a message with recipients on
// three domains makes one transaction per domain; the recipients a domain accepted get a receipt
// and are never sent to again, the refused ones (a whole domain, or one recipient of a domain
// that took the others) are done and suppressed, and a retry goes only to the one that deferred;
// one host answering 250, 451 and 550 to the recipients of one transaction gives each its own outcome.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { actor } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { dnsResolver } from '../../lib/dns.ts';
import { directTransport } from '../../mta/direct.smtp.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';
import type { Transport } from '../../mta/transport.ts';
import { verifyReceiptChain } from '../../sdk/node/receipts.ts';
import { startDns, type DnsServer } from '../../test/harness/dns.harness.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';
import { freePort, startMx, type MxHost } from '../../test/harness/mx.harness.ts';
import { timelineOf } from '../../events/email.event.ts';
import { messageActor } from '../message/message.actor.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { deliveryActor } from './delivery.actor.ts';

let h: Harness;
let catalog: SqliteCatalog;
let dns: DnsServer;
let transport: Transport;
const mx: Record<'ok' | 'later' | 'refuse' | 'mixed' | 'none' | 'late', MxHost> = {} as never;

/** An RCPT TO answer by the recipient's local part: later… 451, gone… 550 5.1.1, the rest accepted. */
const byRecipient = (to: string) =>
  to.startsWith('later')
    ? { code: 451, text: '4.2.1 Mailbox busy, try later' }
    : to.startsWith('gone')
      ? { code: 550, text: '5.1.1 No such user here' }
      : ('accept' as const);

/** A DeliveryActor over the loopback MX hosts, with the default breaker and no warmup, and `given` on top. */
const deliveryWith = (given: Partial<Parameters<typeof deliveryActor>[0]>) =>
  deliveryActor({
    transport,
    receiptKeys: new ReceiptKeys(catalog),
    signers: NO_SIGNERS,
    retrySchedule: [3_600_000],
    horizonMs: 86_400_000,
    breaker: loadConfig({}).breaker,
    warmup: loadConfig({ GATEPOST_WARMUP: 'false' }).warmup,
    sourceIps: [],
    ...given,
  });

beforeAll(async () => {
  const port = await freePort();
  mx.ok = await startMx('127.0.0.2', port, {
    verdict: (to) => (to === 'eve@ok.test' ? { code: 550, text: '5.1.1 No such user here' } : 'accept'),
  });
  mx.later = await startMx('127.0.0.3', port, { verdict: () => ({ code: 451, text: '4.3.0 Try again later' }) });
  mx.refuse = await startMx('127.0.0.4', port, { verdict: () => ({ code: 550, text: '5.1.1 No such user here' }) });
  mx.mixed = await startMx('127.0.0.5', port, { verdict: byRecipient });
  mx.none = await startMx('127.0.0.6', port, { verdict: byRecipient });
  mx.late = await startMx('127.0.0.7', port, {
    verdict: byRecipient,
    dataVerdict: () => ({ code: 451, text: '4.3.0 Queue full' }),
  });
  const records: Parameters<typeof startDns>[0] = {};
  for (const [name, host] of Object.entries(mx)) {
    records[`mx.${name}.test`] = { A: [host.ip] };
    records[`${name}.test`] = { MX: [{ exchange: `mx.${name}.test`, priority: 10 }] };
  }
  dns = await startDns(records);
  transport = directTransport({
    resolver: dnsResolver([dns.address]),
    port,
    hostname: 'gatepost.test',
    maxConnections: 2,
    timeouts: { connectMs: 2_000, greetingMs: 2_000, commandMs: 2_000 },
  });
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
});

afterAll(async () => {
  await transport?.close();
  await catalog?.close();
  await h?.cleanup();
  await Promise.all(Object.values(mx).map((m) => m.close()));
  await dns?.close();
});

describe('delivery to every recipient domain', () => {
  it('one transaction per domain; a retry goes only to the domain that deferred; each acceptance has a chained receipt', async () => {
    const keys = new ReceiptKeys(catalog);
    const delivery = deliveryWith({ receiptKeys: keys, retrySchedule: [3_600_000, 3_600_000] });
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, delivery] });
    const content = {
      ...admitArgs().content,
      to: 'ann@ok.test',
      cc: ['bob@ok.test', 'cat@later.test', 'dan@refuse.test', 'eve@ok.test'],
    };
    await actor(runtime, messageActor, 'msg_d').admit(admitArgs({ content }));
    const d = actor(runtime, delivery, 'msg_d');
    const attempt = async () => {
      const { attempt: go, interrupted, number } = await d.begin(undefined);
      expect(go).toBe(true);
      return d.attempt({ interrupted, number });
    };
    const timeline = async () => timelineOf((await actor(runtime, messageActor, 'msg_d').get(undefined)).record);
    const status = async () => (await actor(runtime, messageActor, 'msg_d').get(undefined)).record.status;

    expect(await attempt()).toBe('deferred');
    expect(await status()).toBe('deferred');
    const first = (await timeline()).filter((e) => e.data.attempt === 1);
    expect(first.map((e) => [e.type, e.data.domain, e.data.recipients])).toEqual([
      ['email.sent', 'ok.test', ['ann@ok.test', 'bob@ok.test']],
      ['email.bounced', 'ok.test', ['eve@ok.test']],
      ['message.deferred', 'later.test', ['cat@later.test']],
      ['email.bounced', 'refuse.test', ['dan@refuse.test']],
    ]);
    expect(first[1]!.data).toMatchObject({ bounce_type: 'hard', stage: 'rcpt', smtp_code: 550, mx: 'mx.ok.test' });
    expect(first[3]!.data).toMatchObject({ bounce_type: 'hard', stage: 'rcpt', smtp_code: 550 });
    // A hard bounce suppresses the refused recipients only.
    expect(await actor(runtime, recipientActor, recipientActorId('ten_1', 'eve@ok.test')).check(undefined)).toMatchObject({
      reason: 'hard_bounce',
    });
    expect(await actor(runtime, recipientActor, recipientActorId('ten_1', 'dan@refuse.test')).check(undefined)).toMatchObject({
      reason: 'hard_bounce',
    });
    expect(await actor(runtime, recipientActor, recipientActorId('ten_1', 'cat@later.test')).check(undefined)).toBeNull();

    mx.later.verdict = () => 'accept';
    // Every domain is done now, one refused: the message is bounced.
    expect(await attempt()).toBe('bounced');
    expect(await status()).toBe('bounced');
    const second = (await timeline()).filter((e) => e.data.attempt === 2);
    expect(second.map((e) => [e.type, e.data.domain])).toEqual([['email.sent', 'later.test']]);
    expect(mx.ok.received.map((r) => r.to)).toEqual([['ann@ok.test', 'bob@ok.test']]);
    expect(mx.later.received.map((r) => r.to)).toEqual([['cat@later.test']]);
    expect(mx.refuse.received).toEqual([]);
    // Done: no further attempt.
    expect((await d.begin(undefined)).attempt).toBe(false);

    const receipts = (await timeline())
      .filter((e) => e.type === 'email.sent')
      .map((e) => (e.data.receipt as { jws: string }).jws);
    const claims = await verifyReceiptChain(receipts, await keys.jwks());
    expect(claims.map((c) => [c.seq, c.envelope.to, c.attempt])).toEqual([
      [1, 'ann@ok.test, bob@ok.test', 1],
      [2, 'cat@later.test', 2],
    ]);
  });
});

describe('mixed replies in one transaction', () => {
  it('250, 451 and 550 to the recipients of one MX host: each recipient its own outcome, and a retry only for the 451', async () => {
    const delivery = deliveryWith({ retrySchedule: [3_600_000, 3_600_000] });
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, delivery] });
    // mixed.test takes ann, defers later1 and refuses gone1; none.test takes nobody: it defers
    // later2 and refuses gone2, each in the same transaction.
    const content = {
      ...admitArgs().content,
      to: 'ann@mixed.test',
      cc: ['later1@mixed.test', 'gone1@mixed.test', 'later2@none.test', 'gone2@none.test'],
    };
    await actor(runtime, messageActor, 'msg_m').admit(admitArgs({ content }));
    const d = actor(runtime, delivery, 'msg_m');
    const attempt = async () => {
      const { attempt: go, interrupted, number } = await d.begin(undefined);
      expect(go).toBe(true);
      return d.attempt({ interrupted, number });
    };
    const timeline = async () => timelineOf((await actor(runtime, messageActor, 'msg_m').get(undefined)).record);

    expect(await attempt()).toBe('deferred');
    const first = (await timeline()).filter((e) => e.data.attempt === 1);
    expect(first.map((e) => [e.type, e.data.domain, e.data.recipients, e.data.smtp_code, e.data.bounce_type ?? null])).toEqual([
      ['email.sent', 'mixed.test', ['ann@mixed.test'], 250, null],
      ['message.deferred', 'mixed.test', ['later1@mixed.test'], 451, null],
      ['email.bounced', 'mixed.test', ['gone1@mixed.test'], 550, 'hard'],
      ['message.deferred', 'none.test', ['later2@none.test'], 451, null],
      ['email.bounced', 'none.test', ['gone2@none.test'], 550, 'hard'],
    ]);
    expect(first[0]!.data.receipt).toMatchObject({ id: expect.stringMatching(/^rcp_/) });
    expect(first[1]!.data).toMatchObject({ stage: 'rcpt', enhanced_code: '4.2.1', retry_at: expect.any(String) });
    for (const gone of ['gone1@mixed.test', 'gone2@none.test']) {
      expect(await actor(runtime, recipientActor, recipientActorId('ten_1', gone)).check(undefined)).toMatchObject({
        reason: 'hard_bounce',
      });
    }
    expect(await actor(runtime, recipientActor, recipientActorId('ten_1', 'later1@mixed.test')).check(undefined)).toBeNull();

    // The retry goes to the deferred recipients only, and they are taken now.
    mx.mixed.verdict = mx.none.verdict = () => 'accept';
    expect(await attempt()).toBe('bounced');
    const second = (await timeline()).filter((e) => e.data.attempt === 2);
    expect(second.map((e) => [e.type, e.data.domain, e.data.recipients])).toEqual([
      ['email.sent', 'mixed.test', ['later1@mixed.test']],
      ['email.sent', 'none.test', ['later2@none.test']],
    ]);
    expect(mx.mixed.received.map((r) => r.to)).toEqual([['ann@mixed.test'], ['later1@mixed.test']]);
    expect(mx.none.received.map((r) => r.to)).toEqual([['later2@none.test']]);
  });

  it('a recipient refused at RCPT TO keeps its own 550 when the data is then deferred for the others', async () => {
    const delivery = deliveryWith({});
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, delivery] });
    const content = { ...admitArgs().content, to: 'ann@late.test', cc: ['gone3@late.test'] };
    await actor(runtime, messageActor, 'msg_l').admit(admitArgs({ content }));
    const d = actor(runtime, delivery, 'msg_l');
    const { interrupted, number } = await d.begin(undefined);
    expect(await d.attempt({ interrupted, number })).toBe('deferred');
    const events = timelineOf((await actor(runtime, messageActor, 'msg_l').get(undefined)).record);
    expect(
      events.filter((e) => e.data.attempt === 1).map((e) => [e.type, e.data.recipients, e.data.stage, e.data.smtp_code]),
    ).toEqual([
      ['message.deferred', ['ann@late.test'], 'data', 451],
      ['email.bounced', ['gone3@late.test'], 'rcpt', 550],
    ]);
  });
});

describe('a verified domain whose keys cannot be used', () => {
  it('defers the message, and sends nothing unsigned', async () => {
    const delivery = deliveryWith({ signers: { signerFor: () => Promise.reject(new Error('the sealed key cannot be opened')) } });
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, delivery] });
    const before = mx.ok.received.length;
    await actor(runtime, messageActor, 'msg_k').admit(
      admitArgs({ content: { ...admitArgs().content, to: 'ann@ok.test', cc: [] } }),
    );
    const d = actor(runtime, delivery, 'msg_k');
    const { interrupted, number } = await d.begin(undefined);
    expect(await d.attempt({ interrupted, number })).toBe('deferred');
    const events = timelineOf((await actor(runtime, messageActor, 'msg_k').get(undefined)).record);
    expect(events.filter((e) => e.data.attempt === 1).map((e) => [e.type, e.data.response])).toEqual([
      ['message.deferred', expect.stringContaining('DKIM signing failed: Error: the sealed key cannot be opened')],
    ]);
    expect(mx.ok.received.length).toBe(before);
  });
});

describe('a message that is not there', () => {
  it('is skipped, and its delivery keeps nothing of it (an admission whose hand-over went before a commit that failed)', async () => {
    const delivery = deliveryWith({});
    const runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor, delivery] });
    const before = mx.ok.received.length;
    const d = actor(runtime, delivery, 'msg_never');
    const first = await d.begin(undefined);
    expect(first).toEqual({ attempt: true, interrupted: false, number: 1 });
    expect(await d.attempt({ interrupted: first.interrupted, number: first.number })).toBe('skipped');
    // Nothing kept: a later hand-over of the same id begins afresh, not as a retry of an interrupted attempt.
    expect(await d.begin(undefined)).toEqual({ attempt: true, interrupted: false, number: 1 });
    expect(mx.ok.received.length).toBe(before);
  });
});
