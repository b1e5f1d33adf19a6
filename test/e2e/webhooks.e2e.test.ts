// Signed webhooks end to end: an HTTPS receiver with a self-signed certificate (trusted through
// NODE_EXTRA_CA_CERTS) at a host name served by a DNS server of the test's own; signatures
// checked by implementations that are not Gatepost's (standardwebhooks, node:crypto); retries
// with one evt_ id; rotation; 410; redelivery by hand; the timeline; a restart mid-schedule.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../sdk/node/webhooks.ts';
import { startDns, type DnsServer } from '../harness/dns.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { selfSignedCertificate, startReceiver, type Delivery, type Receiver } from '../harness/receiver.harness.ts';
import { startRelay, type Relay } from '../harness/relay.harness.ts';

let dns: DnsServer;
let relay: Relay;
let receiver: Receiver;
let gp: GatepostProcess;
/** What each path of the receiver answers, by delivery number on that path. */
const answers = new Map<string, (n: number) => number | { status: number; headers?: Record<string, string> }>();

beforeAll(async () => {
  const cert = await selfSignedCertificate(['hooks.test'], []);
  dns = await startDns({ 'hooks.test': { A: ['127.0.0.1'] } });
  receiver = await startReceiver({ tls: cert, urlHost: 'hooks.test' });
  receiver.respond = (d) => {
    const path = d.path.split('?')[0]!;
    const n = receiver.received.filter((r) => r.path.split('?')[0] === path).length;
    return answers.get(path)?.(n) ?? 200;
  };
  relay = await startRelay();
  gp = await startGatepost({
    relayUrl: relay.url,
    env: {
      NODE_EXTRA_CA_CERTS: cert.certFile,
      GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1',
      GATEPOST_DNS_SERVERS: dns.address,
      GATEPOST_WEBHOOK_RETRY: '300ms,300ms,300ms,300ms',
    },
  });
});
afterAll(async () => {
  await gp?.dispose();
  await receiver?.close();
  await relay?.close();
  await dns?.close();
});

type Tenant = Awaited<ReturnType<GatepostProcess['tenant']>>;

async function endpoint(t: Tenant, path: string, events = ['email.sent']) {
  const res = await gp.request('POST', '/v1/webhooks', { key: t.live, body: { url: `${receiver.url}${path}`, events } });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string; url: string };
}

async function send(t: Tenant, to = 'ann@example.com'): Promise<string> {
  const res = await gp.request('POST', '/v1/emails', { key: t.live, body: { to, subject: 'Hooks', html: '<p>h</p>' } });
  expect(res.status).toBe(202);
  return res.body.id;
}

const deliveries = async (t: Tenant, id: string) =>
  (await gp.request('GET', `/v1/webhooks/${id}/deliveries`, { key: t.live })).body.data as {
    event_id: string;
    attempt: number;
    status_code: number | null;
    error: string | null;
    result: string;
    duration_ms: number;
    at: string;
    next_attempt_at: string | null;
  }[];

const at = (path: string) => receiver.received.filter((d) => d.path === path);
const headerOf = (d: Delivery, name: string) => d.headers[name] as string;

describe('webhooks, end to end', () => {
  it('a send produces email.sent at an HTTPS receiver, signed so that standardwebhooks and node:crypto verify it', async () => {
    const t = await gp.tenant();
    const w = await endpoint(t, '/sent');
    expect(w.id).toMatch(/^whk_[0-9a-z]{26}$/);
    expect(w.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const messageId = await send(t);
    const [d] = await eventually(() => (at('/sent').length > 0 ? at('/sent') : undefined));

    const event = JSON.parse(d!.body);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
      type: 'email.sent',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: expect.objectContaining({ message_id: messageId, to: 'ann@example.com', smtp_code: 250, attempt: 1 }),
    });
    // Host and SNI are the URL's host: the certificate for hooks.test checked out on 127.0.0.1.
    expect(d!.headers.host).toBe(`hooks.test:${receiver.port}`);
    expect(headerOf(d!, 'x-service-event')).toBe('email.sent');
    expect(headerOf(d!, 'content-type')).toBe('application/json');

    // node:crypto, by the documented byte layout: hex HMAC-SHA256(secret, "<t>.<raw body>").
    const t_ = headerOf(d!, 'x-service-timestamp');
    expect(Math.abs(Number(t_) - Date.now() / 1000)).toBeLessThan(300);
    const hex = createHmac('sha256', w.secret).update(`${t_}.${d!.body}`).digest('hex');
    expect(headerOf(d!, 'x-service-signature')).toBe(`t=${t_},v1=${hex}`);
    // standardwebhooks as it is, with the secret exactly as Gatepost handed it out.
    expect(new Webhook(w.secret).verify(d!.body, d!.headers as Record<string, string>)).toEqual(event);
    expect(headerOf(d!, 'webhook-id')).toBe(event.id);
    // And the SDK's verifier.
    expect(verifyWebhook({ payload: d!.body, headers: d!.headers, secret: w.secret })).toEqual(event);

    const [entry] = await eventually(async () => {
      const l = await deliveries(t, w.id);
      return l.length > 0 ? l : undefined;
    });
    expect(entry).toMatchObject({ event_id: event.id, attempt: 1, status_code: 200, error: null, result: 'delivered' });
    const timeline = await eventually(async () => {
      const m = (await gp.request('GET', `/v1/messages/${messageId}`, { key: t.live })).body;
      return m.events.some((e: { type: string }) => e.type === 'webhook.delivered') ? m.events : undefined;
    });
    expect(timeline.find((e: { type: string }) => e.type === 'webhook.delivered').data).toMatchObject({
      endpoint_id: w.id,
      event_id: event.id,
      attempts: 1,
      status_code: 200,
    });
  });

  it("an endpoint added just before a send gets its event, though the tenant's endpoints were looked up before", async () => {
    const t = await gp.tenant();
    await endpoint(t, '/known');
    const first = await send(t);
    // Fanned out once: where endpoints are kept in memory (every runtime), the tenant's are now.
    await eventually(() => at('/known').some((d) => JSON.parse(d.body).data.message_id === first));
    // Added through the API, which on Dapr is not the process that fans the events out.
    await endpoint(t, '/added');
    const second = await send(t);
    const d = await eventually(() => at('/added').find((d) => JSON.parse(d.body).data.message_id === second));
    expect(JSON.parse(d.body).type).toBe('email.sent');
  });

  it('opens and clicks, recorded in groups after their answers, reach the receiver and the timeline alike', async () => {
    const t = await gp.tenant();
    await endpoint(t, '/engagement', ['email.opened', 'email.clicked']);
    const to = `reader-${Date.now()}@example.com`;
    const sent = await gp.request('POST', '/v1/emails', {
      key: t.live,
      body: { to, subject: 'News', stream: 'broadcast', html: '<p><a href="https://shop.example/sale">Sale</a></p>' },
    });
    const messageId = sent.body.id as string;
    const received = await eventually(() => relay.received.find((r) => r.to.includes(to)));
    const html = String(received.parsed.html);
    const link = /href="([^"]*\/t\/c\/[^"]*)"/.exec(html)![1]!;
    const pixel = /src="([^"]*\/t\/o\/[^"]*)"/.exec(html)![1]!;
    for (let i = 0; i < 3; i++) expect((await fetch(link, { redirect: 'manual' })).status).toBe(302);
    for (let i = 0; i < 2; i++) expect((await fetch(pixel)).status).toBe(200);

    const events = await eventually(() => (at('/engagement').length >= 5 ? at('/engagement') : undefined));
    const bodies = events.map((d) => JSON.parse(d.body) as { id: string; type: string; data: Record<string, unknown> });
    expect(bodies.filter((e) => e.type === 'email.clicked')).toHaveLength(3);
    // Deliveries to an endpoint run several at once, so they may arrive in any order: one first open of two.
    expect(
      bodies
        .filter((e) => e.type === 'email.opened')
        .map((e) => e.data.first)
        .sort(),
    ).toEqual([false, true]);
    expect(bodies.every((e) => e.data.message_id === messageId && e.data.to === to)).toBe(true);
    // The timeline holds the very events the receiver was sent, in the order of the hits.
    const timeline = (await gp.request('GET', `/v1/messages/${messageId}`, { key: t.live })).body.events as {
      id: string;
      type: string;
    }[];
    const engagement = timeline.filter((e) => e.type === 'email.clicked' || e.type === 'email.opened');
    expect(engagement.map((e) => e.type)).toEqual([
      'email.clicked',
      'email.clicked',
      'email.clicked',
      'email.opened',
      'email.opened',
    ]);
    expect(new Set(engagement.map((e) => e.id))).toEqual(new Set(bodies.map((e) => e.id)));
    const firstOpen = bodies.find((e) => e.data.first === true)!;
    expect(engagement.find((e) => e.type === 'email.opened')!.id).toBe(firstOpen.id);
  });

  it('a receiver that fails twice, then succeeds, sees three attempts with one evt_ id', async () => {
    const t = await gp.tenant();
    answers.set('/flaky', (n) => (n <= 2 ? 500 : 200));
    const w = await endpoint(t, '/flaky');
    await send(t);
    await eventually(async () => (await deliveries(t, w.id))[0]?.result === 'delivered');
    const ids = at('/flaky').map((d) => JSON.parse(d.body).id);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(1);
    expect(new Set(at('/flaky').map((d) => headerOf(d, 'webhook-id')))).toEqual(new Set(ids));
    expect((await deliveries(t, w.id)).map((e) => [e.attempt, e.status_code, e.result])).toEqual([
      [3, 200, 'delivered'],
      [2, 500, 'retrying'],
      [1, 500, 'retrying'],
    ]);
  });

  it('after a rotation every delivery carries two v1 signatures, one per secret, for 24 hours', async () => {
    const t = await gp.tenant();
    const w = await endpoint(t, '/rotated');
    const rotated = await gp.request('POST', `/v1/webhooks/${w.id}/rotate`, { key: t.live });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(w.secret);
    const overlap = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
    expect(overlap).toBeGreaterThan(23 * 3600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);
    const shown = (await gp.request('GET', `/v1/webhooks/${w.id}`, { key: t.live })).body;
    expect(shown.previous_secret_expires_at).toBe(rotated.body.previous_secret_expires_at);
    expect(JSON.stringify(shown)).not.toContain('whsec_');

    await send(t);
    const [d] = await eventually(() => (at('/rotated').length > 0 ? at('/rotated') : undefined));
    const signature = headerOf(d!, 'x-service-signature');
    const v1 = [...signature.matchAll(/v1=([0-9a-f]{64})/g)].map((m) => m[1]);
    expect(v1).toHaveLength(2);
    const t_ = /^t=(\d+),/.exec(signature)![1];
    for (const secret of [fresh, w.secret]) {
      expect(v1).toContain(createHmac('sha256', secret).update(`${t_}.${d!.body}`).digest('hex'));
      expect(new Webhook(secret).verify(d!.body, d!.headers as Record<string, string>)).toMatchObject({ type: 'email.sent' });
    }
  });

  it('410 Gone disables the endpoint, visibly; a test event is then refused until it is enabled', async () => {
    const t = await gp.tenant();
    answers.set('/gone', () => 410);
    const w = await endpoint(t, '/gone');
    await send(t);
    const shown = await eventually(async () => {
      const x = (await gp.request('GET', `/v1/webhooks/${w.id}`, { key: t.live })).body;
      return x.enabled === false ? x : undefined;
    });
    expect(shown).toMatchObject({ enabled: false, disabled_reason: 'gone', disabled_at: expect.any(String) });
    expect(at('/gone')).toHaveLength(1);
    expect((await deliveries(t, w.id))[0]).toMatchObject({ status_code: 410, result: 'failed' });

    const test = await gp.request('POST', `/v1/webhooks/${w.id}/test`, { key: t.live });
    expect(test.status).toBe(409);
    expect(test.body.error.code).toBe('webhook_disabled');
    answers.set('/gone', () => 200);
    const enabled = await gp.request('PATCH', `/v1/webhooks/${w.id}`, { key: t.live, body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    expect((await gp.request('POST', `/v1/webhooks/${w.id}/test`, { key: t.live })).status).toBe(202);
    await eventually(() => at('/gone').length === 2);
  });

  it('a failed event is redelivered by hand, with the same evt_ id; the timeline shows both outcomes', async () => {
    const t = await gp.tenant();
    let down = true;
    answers.set('/down', () => (down ? 503 : 200));
    const w = await endpoint(t, '/down');
    const messageId = await send(t);
    // Five attempts (four waits), then failed.
    const failed = await eventually(async () => {
      const l = await deliveries(t, w.id);
      return l[0]?.result === 'failed' ? l : undefined;
    });
    expect(failed.map((e) => e.attempt)).toEqual([5, 4, 3, 2, 1]);
    const eventId = failed[0]!.event_id;

    const early = await gp.request('POST', `/v1/webhooks/${w.id}/deliveries/evt_00000000000000000000000000/retry`, {
      key: t.live,
    });
    expect(early.status).toBe(404);
    down = false;
    const retry = await gp.request('POST', `/v1/webhooks/${w.id}/deliveries/${eventId}/retry`, { key: t.live });
    expect(retry).toMatchObject({ status: 202, body: { event_id: eventId, status: 'pending' } });
    await eventually(async () => (await deliveries(t, w.id))[0]?.result === 'delivered');
    expect(new Set(at('/down').map((d) => JSON.parse(d.body).id))).toEqual(new Set([eventId]));
    expect(at('/down')).toHaveLength(6);
    const again = await gp.request('POST', `/v1/webhooks/${w.id}/deliveries/${eventId}/retry`, { key: t.live });
    expect(again.body.error.code).toBe('webhook_delivery_not_failed');

    const events = await eventually(async () => {
      const m = (await gp.request('GET', `/v1/messages/${messageId}`, { key: t.live })).body;
      return m.events.some((e: { type: string }) => e.type === 'webhook.delivered') ? m.events : undefined;
    });
    expect(events.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['email.sent', 'webhook.failed', 'webhook.delivered']),
    );
    expect(events.find((e: { type: string }) => e.type === 'webhook.failed').data).toMatchObject({
      endpoint_id: w.id,
      event_id: eventId,
      attempts: 5,
      status_code: 503,
    });
  });

  it('manages endpoints: list, get, update, test event, delete; the secret is shown only once', async () => {
    const t = await gp.tenant();
    const other = await gp.tenant();
    const w = await endpoint(t, '/managed', ['email.sent', 'email.bounced', 'email.sent']);
    const list = await gp.request('GET', '/v1/webhooks', { key: t.live });
    expect(list.body.data).toEqual([
      {
        id: w.id,
        url: `${receiver.url}/managed`,
        events: ['email.sent', 'email.bounced'],
        enabled: true,
        disabled_reason: null,
        disabled_at: null,
        previous_secret_expires_at: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect((await gp.request('GET', `/v1/webhooks/${w.id}`, { key: other.live })).status).toBe(404);
    expect((await gp.request('GET', '/v1/webhooks', { key: other.live })).body.data).toEqual([]);

    const patched = await gp.request('PATCH', `/v1/webhooks/${w.id}`, {
      key: t.live,
      body: { url: `${receiver.url}/managed2`, events: ['email.bounced'] },
    });
    expect(patched.body).toMatchObject({ url: `${receiver.url}/managed2`, events: ['email.bounced'] });
    const bad = await gp.request('PATCH', `/v1/webhooks/${w.id}`, { key: t.live, body: { events: ['email.nope'] } });
    expect(bad.status).toBe(400);
    const refused = await gp.request('PATCH', `/v1/webhooks/${w.id}`, { key: t.live, body: { url: 'https://10.0.0.1/x' } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'webhook_url_refused', details: [{ field: 'url' }] });

    // The test event: its own type, delivered and signed like any other.
    const test = await gp.request('POST', `/v1/webhooks/${w.id}/test`, { key: t.live });
    expect(test.status).toBe(202);
    expect(test.body.event).toMatchObject({ type: 'webhook.test', data: { endpoint_id: w.id } });
    const [d] = await eventually(() => (at('/managed2').length > 0 ? at('/managed2') : undefined));
    expect(verifyWebhook({ payload: d!.body, headers: d!.headers, secret: w.secret })).toEqual(test.body.event);
    expect(headerOf(d!, 'x-service-event')).toBe('webhook.test');

    expect((await gp.request('DELETE', `/v1/webhooks/${w.id}`, { key: t.live })).status).toBe(204);
    expect((await gp.request('GET', `/v1/webhooks/${w.id}`, { key: t.live })).status).toBe(404);
    expect((await gp.request('DELETE', `/v1/webhooks/${w.id}`, { key: t.live })).status).toBe(404);
    const nonsense = await gp.request('POST', '/v1/webhooks', { key: t.live, body: { url: `${receiver.url}/x`, events: [] } });
    expect(nonsense.status).toBe(400);
  });
});

describe('a restart in the middle of a retry schedule', () => {
  it('makes the next attempt at its time after the restart (SIGKILL)', async () => {
    const gp2 = await startGatepost({
      env: {
        NODE_EXTRA_CA_CERTS: gp.env.NODE_EXTRA_CA_CERTS!,
        GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1',
        GATEPOST_DNS_SERVERS: dns.address,
        GATEPOST_WEBHOOK_RETRY: '5s',
      },
    });
    try {
      const t = await gp2.tenant();
      answers.set('/restart', (n) => (n === 1 ? 500 : 200));
      const w = (
        await gp2.request('POST', '/v1/webhooks', {
          key: t.live,
          body: { url: `${receiver.url}/restart`, events: ['email.sent'] },
        })
      ).body;
      await gp2.request('POST', '/v1/emails', { key: t.sandbox, body: { to: 'r@example.com', subject: 's', html: '<p>h</p>' } });
      // A fresh Gatepost: on Dapr its actors are first placed now, which a busy machine makes slow.
      const first = await eventually(async () => {
        const l = (await gp2.request('GET', `/v1/webhooks/${w.id}/deliveries`, { key: t.live })).body.data;
        return l[0]?.result === 'retrying' ? l[0] : undefined;
      }, 30_000);
      const due = Date.parse(first.next_attempt_at);
      await gp2.kill();
      await gp2.start();
      await eventually(() => at('/restart').length === 2, 30_000);
      const [a, b] = at('/restart');
      expect(JSON.parse(b!.body).id).toBe(JSON.parse(a!.body).id);
      // Not before its time, though Gatepost was down in between.
      expect(b!.at).toBeGreaterThanOrEqual(due);
      await eventually(async () => {
        const l = (await gp2.request('GET', `/v1/webhooks/${w.id}/deliveries`, { key: t.live })).body.data;
        return l[0]?.result === 'delivered';
      });
    } finally {
      await gp2.dispose();
    }
  });
});
