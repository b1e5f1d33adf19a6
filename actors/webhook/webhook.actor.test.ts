// WebhookActor and its lanes on the embedded runtime, delivering to real local receivers: retries
// with one evt_ id, Retry-After, running out, redelivery by hand, 410, the failing window, an
// attempt cut short by a stop, the timeline, and a stuck endpoint that holds up no other.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registerActors } from '../../app/gatepost.ts';
import { actor } from '../../runtime/runtime.port.ts';
import { EmbeddedRuntime } from '../../runtime/embedded/runtime.sqlite.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { newId } from '../../lib/ids.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { startReceiver, type Receiver } from '../../test/harness/receiver.harness.ts';
import { SsrfGuard } from '../../webhooks/ssrf.guard.ts';
import { messageActor } from '../message/message.actor.ts';
import { timelineOf } from '../../events/email.event.ts';
import { LIFECYCLE_EVENTS } from '../../events/email.event.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { WEBHOOK_ACTOR, webhookClient } from './webhook.actor.ts';
import { signingSecrets } from '../../webhooks/webhook.signing.ts';
import type { AttemptLogEntry } from './webhook.state.ts';
import type { WebhookEnvelope } from '../../events/email.event.ts';
import { unreachableRelay } from '../../test/harness/relay.harness.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';

let h: Harness;
let catalog: SqliteCatalog;
const runtimes: EmbeddedRuntime[] = [];
const receivers: Receiver[] = [];
const drains: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const d of drains.splice(0)) await d();
  for (const r of runtimes.splice(0)) await r.stop();
  for (const r of receivers.splice(0)) await r.close();
  await catalog.close();
  await h.cleanup();
});

interface Options {
  retry?: number[];
  disableAfterMs?: number;
  timeoutMs?: number;
}

async function start(opts: Options = {}): Promise<EmbeddedRuntime> {
  const runtime = new EmbeddedRuntime({ file: h.file, log: () => {} });
  const { drain } = registerActors(runtime, {
    catalog,
    transport: await unreachableRelay(),
    receiptKeys: new ReceiptKeys(catalog),
    signers: NO_SIGNERS,
    retrySchedule: [60_000],
    horizonMs: 86_400_000,
    webhooks: {
      guard: new SsrfGuard({ allow: ['127.0.0.0/8'] }),
      retrySchedule: opts.retry ?? [50, 50, 50],
      timeoutMs: opts.timeoutMs ?? 5_000,
      disableAfterMs: opts.disableAfterMs ?? 86_400_000,
    },
  });
  drains.push(drain);
  await runtime.start();
  runtimes.push(runtime);
  return runtime;
}

async function setup(opts: Options = {}) {
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
  const tenant = await catalog.createTenant({
    id: newId('ten'),
    name: 't',
    default_from: null,
    quota: { per_second: null, per_day: null },
  });
  const runtime = await start(opts);
  const receiver = await startReceiver();
  receivers.push(receiver);
  const endpoint = async (r: Receiver = receiver) =>
    catalog.createWebhook({
      id: newId('whk'),
      tenant_id: tenant.id,
      url: `${r.url}/hook`,
      events: ['email.sent'],
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    });
  return { tenant, runtime, receiver, endpoint };
}

const envelope = (data: Record<string, unknown> = {}): WebhookEnvelope => ({
  id: newId('evt'),
  type: 'email.sent',
  created_at: new Date().toISOString(),
  data: { message_id: 'msg_none', ...data },
});

const log = (runtime: EmbeddedRuntime, id: string) => webhookClient(runtime, id).deliveries({}) as Promise<AttemptLogEntry[]>;

describe('WebhookActor', () => {
  it('retries until a 2xx, with the same evt_ id on every attempt, and takes an event once', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup();
    const w = await endpoint();
    let calls = 0;
    receiver.respond = () => (++calls <= 2 ? 500 : 200);
    const event = envelope();
    const client = webhookClient(runtime, w.id);
    expect(await client.enqueue({ tenant_id: tenant.id, event })).toEqual({ enqueued: true });
    expect(await client.enqueue({ tenant_id: tenant.id, event })).toEqual({ enqueued: false });

    const entries = await eventually(async () => {
      const l = await log(runtime, w.id);
      if (l[0]?.result !== 'delivered') throw new Error('not yet');
      return l;
    });
    expect(entries.map((e) => [e.attempt, e.status_code, e.result])).toEqual([
      [3, 200, 'delivered'],
      [2, 500, 'retrying'],
      [1, 500, 'retrying'],
    ]);
    expect(entries[2]!.error).toBe('HTTP 500 Internal Server Error');
    expect(receiver.received.map((d) => JSON.parse(d.body).id)).toEqual([event.id, event.id, event.id]);
    expect(new Set(receiver.received.map((d) => d.headers['webhook-id']))).toEqual(new Set([event.id]));
    // Delivered: a publication of the same event again changes nothing.
    expect(await client.enqueue({ tenant_id: tenant.id, event })).toEqual({ enqueued: false });
  });

  it('honours Retry-After on 429 and 503', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup();
    const w = await endpoint();
    receiver.respond = () => (receiver.received.length === 1 ? { status: 503, headers: { 'retry-after': '1' } } : 200);
    await webhookClient(runtime, w.id).enqueue({ tenant_id: tenant.id, event: envelope() });
    await eventually(() => receiver.received.length === 2, 10_000);
    const [first, second] = receiver.received;
    // The schedule says 50 ms; the receiver asked for a second.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
    const entries = await log(runtime, w.id);
    expect(Date.parse(entries.at(-1)!.next_attempt_at!) - Date.parse(entries.at(-1)!.at)).toBeGreaterThanOrEqual(1000);
  });

  it('marks the event failed when the attempts run out; a redelivery by hand makes one more', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup({ retry: [20, 20] });
    const w = await endpoint();
    receiver.respond = () => 500;
    const event = envelope();
    const client = webhookClient(runtime, w.id);
    await client.enqueue({ tenant_id: tenant.id, event });
    await eventually(async () => (await log(runtime, w.id))[0]?.result === 'failed');
    expect(receiver.received).toHaveLength(3);
    await expect(client.redeliver({ event_id: newId('evt') })).rejects.toMatchObject({ code: 'not_found' });

    receiver.respond = () => 204;
    await client.redeliver({ event_id: event.id });
    await expect(client.redeliver({ event_id: event.id })).rejects.toMatchObject({ code: 'webhook_delivery_not_failed' });
    await eventually(async () => (await log(runtime, w.id))[0]?.result === 'delivered');
    expect(receiver.received).toHaveLength(4);
    expect((await log(runtime, w.id))[0]).toMatchObject({ attempt: 4, status_code: 204, event_id: event.id });
  });

  it('410 Gone disables the endpoint; its other events fail without a request', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup();
    const w = await endpoint();
    receiver.respond = () => 410;
    const client = webhookClient(runtime, w.id);
    await client.enqueue({ tenant_id: tenant.id, event: envelope() });
    await eventually(async () => (await catalog.getWebhook(tenant.id, w.id))?.enabled === false);
    expect(await catalog.getWebhook(tenant.id, w.id)).toMatchObject({ disabled_reason: 'gone' });
    const [entry] = await log(runtime, w.id);
    expect(entry).toMatchObject({ status_code: 410, result: 'failed' });
    expect(entry!.error).toContain('disabled');

    await client.enqueue({ tenant_id: tenant.id, event: envelope() });
    await eventually(async () => (await log(runtime, w.id)).length === 2);
    expect((await log(runtime, w.id))[0]).toMatchObject({
      status_code: null,
      result: 'failed',
      error: 'the endpoint is disabled (gone)',
    });
    expect(receiver.received).toHaveLength(1);
  });

  it('disables an endpoint that has failed, with no success, for longer than the window', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup({ retry: [300, 300, 300, 300, 300], disableAfterMs: 500 });
    const w = await endpoint();
    receiver.respond = () => 502;
    await webhookClient(runtime, w.id).enqueue({ tenant_id: tenant.id, event: envelope() });
    await eventually(async () => (await catalog.getWebhook(tenant.id, w.id))?.disabled_reason === 'failing', 10_000);
    const [last] = await log(runtime, w.id);
    expect(last!.result).toBe('failed');
    expect(last!.error).toMatch(/has failed since .* and is now disabled/);
    // Enabled again, the old failures no longer count.
    await catalog.updateWebhook(tenant.id, w.id, { enabled: true });
    await webhookClient(runtime, w.id).reset(undefined);
    receiver.respond = () => 200;
    await webhookClient(runtime, w.id).enqueue({ tenant_id: tenant.id, event: envelope() });
    await eventually(async () => (await log(runtime, w.id))[0]?.result === 'delivered');
  });

  it('an attempt cut short by a stop is made again after the restart, with the same evt_ id', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup();
    const w = await endpoint();
    const event = envelope();
    const client = webhookClient(runtime, w.id);
    // An attempt that stays in flight: the lanes are drained first, so nothing finishes it (the
    // process making it "died").
    await drains.pop()!();
    await client.enqueue({ tenant_id: tenant.id, event });
    expect(await client.begin({ event_id: event.id })).toMatchObject({ attempt: 1 });
    await runtimes.pop()!.stop();
    const db = new Database(h.file);
    // Its lease runs out (the HTTP deadline and a margin) while Gatepost is down.
    db.prepare('UPDATE reminders SET due_at = 0 WHERE actor_type = ? AND name = ?').run(WEBHOOK_ACTOR, `e:${event.id}`);
    db.prepare("UPDATE actor_state SET value = json_set(value, '$.lease_until', 0) WHERE actor_type = ? AND key = ?").run(
      WEBHOOK_ACTOR,
      `e:${event.id}`,
    );
    db.close();
    const again = await start();
    await eventually(() => receiver.received.some((d) => JSON.parse(d.body).id === event.id));
    const entries = await eventually(async () => {
      const l = await log(again, w.id);
      if (l[0]?.result !== 'delivered') throw new Error('not yet');
      return l;
    });
    expect(entries.map((e) => [e.attempt, e.result])).toEqual([
      [2, 'delivered'],
      [1, 'retrying'],
    ]);
    expect(entries[1]!.error).toContain('cut short');
  });

  it('an event its lanes lost (the process died before the attempt began) is published again by its watchdog', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup();
    const w = await endpoint();
    const event = envelope();
    // Taken by the actor for lanes that never got it.
    expect(await webhookClient(runtime, w.id).enqueue({ tenant_id: tenant.id, event, publish: false })).toEqual({
      enqueued: true,
    });
    await drains.pop()!();
    await runtimes.pop()!.stop();
    expect(receiver.received).toEqual([]);
    // Its watchdog comes due while Gatepost is down.
    const db = new Database(h.file);
    db.prepare('UPDATE reminders SET due_at = 0 WHERE actor_type = ? AND name = ?').run(WEBHOOK_ACTOR, `e:${event.id}`);
    db.close();
    const again = await start();
    await eventually(async () => (await log(again, w.id))[0]?.result === 'delivered');
    expect(receiver.received.map((d) => JSON.parse(d.body).id)).toEqual([event.id]);
  });

  it('tells the message timeline the final outcome, once; that is not a lifecycle event', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup();
    const w = await endpoint();
    const msg = newId('msg');
    await actor(runtime, messageActor, msg).admit(admitArgs({ tenant_id: tenant.id }));
    receiver.respond = () => 200;
    const event = envelope({ message_id: msg });
    await webhookClient(runtime, w.id).enqueue({ tenant_id: tenant.id, event });
    const timeline = await eventually(async () => {
      const { record } = await actor(runtime, messageActor, msg).get(undefined);
      if (!record.events.some((e) => e.type === 'webhook.delivered')) throw new Error('not yet');
      return timelineOf(record);
    });
    expect(timeline.find((e) => e.type === 'webhook.delivered')!.data).toEqual({
      message_id: msg,
      endpoint_id: w.id,
      event_id: event.id,
      event_type: 'email.sent',
      attempts: 1,
      status_code: 200,
      error: null,
    });
    // Told twice (a retried call), it is on the timeline once.
    await actor(runtime, messageActor, msg).recordWebhook({
      delivered: true,
      endpoint_id: w.id,
      event_id: event.id,
      event_type: 'email.sent',
      attempts: 1,
      status_code: 200,
      error: null,
    });
    const { record } = await actor(runtime, messageActor, msg).get(undefined);
    expect(record.events.filter((e) => e.type === 'webhook.delivered')).toHaveLength(1);
    expect(LIFECYCLE_EVENTS.has('webhook.delivered')).toBe(false);
  });

  it('a receiver that never answers holds up no other endpoint', async () => {
    const { tenant, runtime, receiver, endpoint } = await setup({ timeoutMs: 30_000 });
    const stuck = await startReceiver();
    receivers.push(stuck);
    stuck.respond = () => ({ status: 200, delayMs: 60_000 });
    const slow = await endpoint(stuck);
    const fast = await endpoint(receiver);
    receiver.respond = () => 200;
    // Far more events to the stuck endpoint than it takes at once, then one to the other.
    for (let i = 0; i < 40; i++) await webhookClient(runtime, slow.id).enqueue({ tenant_id: tenant.id, event: envelope() });
    const event = envelope();
    await webhookClient(runtime, fast.id).enqueue({ tenant_id: tenant.id, event });
    await eventually(async () => (await log(runtime, fast.id))[0]?.result === 'delivered');
    // Meanwhile the stuck one has not answered a single attempt.
    expect(await log(runtime, slow.id)).toEqual([]);
    expect(stuck.received.length).toBeGreaterThan(0);
    // Closing it ends the attempts under way (connection reset): they are logged and retried.
    await stuck.close();
    await eventually(async () => (await log(runtime, slow.id)).length > 0);
  });
});

describe('signingSecrets', () => {
  it('signs with the previous secret too until it expires, then with the current one only', () => {
    const at = Date.parse('2026-11-21T10:00:00.000Z');
    const endpoint = {
      id: 'whk_1',
      tenant_id: 'ten_1',
      url: 'https://hooks.example.com/',
      events: ['email.sent'],
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      secret: 'whsec_new',
      previous_secret: 'whsec_old',
      previous_secret_expires_at: '2026-11-22T10:00:00.000Z',
      created_at: '2026-11-20T10:00:00.000Z',
      updated_at: '2026-11-21T10:00:00.000Z',
    };
    expect(signingSecrets(endpoint, at)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(endpoint, at + 24 * 3600_000 - 1)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(endpoint, at + 24 * 3600_000)).toEqual(['whsec_new']);
    expect(signingSecrets({ ...endpoint, previous_secret: null, previous_secret_expires_at: null }, at)).toEqual(['whsec_new']);
  });
});
