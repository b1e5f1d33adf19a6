// GET /metrics and the request log, end to end: a real Gatepost delivering to an SMTP relay and
// posting webhooks to a loopback receiver. Each count is read before and after what should move
// it, so the tests of this file may run in any order. On Dapr the delivery and webhook counters,
// the queue and the delivery log lines live in the actor host, whose /metrics and output this
// harness does not reach: those assertions are embedded-only (marked where they are skipped).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startGatepost, TEST_RUNTIME, ADMIN_TOKEN, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { startReceiver, type Receiver } from '../harness/receiver.harness.ts';
import { startRelay, type Relay } from '../harness/relay.harness.ts';

const TOKEN = 'metrics-token-for-the-e2e-test';
const embedded = TEST_RUNTIME === 'embedded';

let relay: Relay;
let receiver: Receiver;
let gp: GatepostProcess;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;

beforeAll(async () => {
  relay = await startRelay();
  receiver = await startReceiver();
  gp = await startGatepost({
    relayUrl: relay.url,
    env: { GATEPOST_METRICS_TOKEN: TOKEN, GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1' },
  });
  tenant = await gp.tenant();
});
afterAll(async () => {
  await gp?.dispose();
  await receiver?.close();
  await relay?.close();
});

/** One scrape, parsed: the value of each sample by its name and labels. */
async function scrape(): Promise<(name: string, labels?: Record<string, string>) => number> {
  const res = await fetch(`${gp.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = (await res.text())
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
  return (name, labels = {}) =>
    samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
}

async function messageStatus(id: string): Promise<string> {
  return (await gp.request('GET', `/v1/messages/${id}`, { key: tenant.live })).body.status;
}

describe('GET /metrics', () => {
  it('answers only with the token, when GATEPOST_METRICS_TOKEN is set', async () => {
    const none = await gp.request('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('missing_api_key');
    const wrong = await gp.request('GET', '/metrics', { key: 'not-the-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_api_key');
    // Nor does an API key or the admin token open it.
    expect((await gp.request('GET', '/metrics', { key: tenant.live })).status).toBe(401);
    expect((await gp.request('GET', '/metrics', { key: ADMIN_TOKEN })).status).toBe(401);
  });

  it("carries Node's own process metrics", async () => {
    const m = await scrape();
    expect(m('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(m('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('counts a send by ingress and outcome, and its delivery by outcome', async () => {
    const before = await scrape();
    const sent = await gp.request('POST', '/v1/emails', {
      key: tenant.live,
      body: { from: 'app@sender.example', to: 'ann@example.com', subject: 'Hi', html: '<p>Hi</p>' },
    });
    expect(sent.status).toBe(202);
    const accepted = { ingress: 'api', outcome: 'accepted' };
    expect((await scrape())('gatepost_sends_total', accepted)).toBe(before('gatepost_sends_total', accepted) + 1);
    await eventually(async () => (await messageStatus(sent.body.id)) === 'sent');
    // On Dapr the delivery counters are the actor host's.
    if (!embedded) return;
    const deliveries = { outcome: 'sent' };
    const after = await eventually(async () => {
      const m = await scrape();
      return (
        m('gatepost_delivery_attempt_duration_seconds_count', deliveries) >
          before('gatepost_delivery_attempt_duration_seconds_count', deliveries) && m
      );
    });
    expect(after('gatepost_delivery_attempt_duration_seconds_count', deliveries)).toBe(
      before('gatepost_delivery_attempt_duration_seconds_count', deliveries) + 1,
    );
    // The bucket of the slowest latency holds every transaction.
    expect(after('gatepost_delivery_attempt_duration_seconds_bucket', { outcome: 'sent', le: '+Inf' })).toBe(
      after('gatepost_delivery_attempt_duration_seconds_count', deliveries),
    );
  });

  it('counts a refusal at admission by its code', async () => {
    const address = `blocked-${randomUUID().slice(0, 8)}@example.com`;
    expect((await gp.request('POST', '/v1/suppressions', { key: tenant.live, body: { address } })).status).toBe(201);
    const before = await scrape();
    const refused = await gp.request('POST', '/v1/emails', {
      key: tenant.live,
      body: { from: 'app@sender.example', to: address, subject: 'Hi', html: '<p>Hi</p>' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('recipient_suppressed');
    const after = await scrape();
    const code = { code: 'recipient_suppressed' };
    expect(after('gatepost_admission_refusals_total', code)).toBe(before('gatepost_admission_refusals_total', code) + 1);
    const outcome = { ingress: 'api', outcome: 'refused' };
    expect(after('gatepost_sends_total', outcome)).toBe(before('gatepost_sends_total', outcome) + 1);
  });

  it.skipIf(!embedded)(
    "shows a scheduled message in its tenant's queue (embedded: Dapr's state store cannot tell it cheaply)",
    async () => {
      const queued = { tenant: tenant.id, state: 'scheduled' };
      const before = await scrape();
      const sendAt = new Date(Date.now() + 3_600_000).toISOString();
      const scheduled = await gp.request('POST', '/v1/emails', {
        key: tenant.live,
        body: { from: 'app@sender.example', to: 'later@example.com', subject: 'Later', html: '<p>Later</p>', send_at: sendAt },
      });
      expect(scheduled.status).toBe(202);
      // Read at scrape time, at most a second old.
      await eventually(
        async () => (await scrape())('gatepost_queue_messages', queued) === before('gatepost_queue_messages', queued) + 1,
      );
    },
  );

  it.skipIf(!embedded)('counts webhook attempts by outcome (embedded: on Dapr the actor host makes them)', async () => {
    const hook = await gp.request('POST', '/v1/webhooks', {
      key: tenant.live,
      body: { url: `${receiver.url}/hook`, events: ['email.sent'] },
    });
    expect(hook.status).toBe(201);
    const delivered = { outcome: 'delivered' };
    const before = await scrape();
    const sent = await gp.request('POST', '/v1/emails', {
      key: tenant.live,
      body: { from: 'app@sender.example', to: 'bob@example.com', subject: 'Hi', html: '<p>Hi</p>' },
    });
    expect(sent.status).toBe(202);
    await eventually(() => receiver.received.some((d) => d.body.includes(sent.body.id)));
    await eventually(
      async () =>
        (await scrape())('gatepost_webhook_attempt_duration_seconds_count', delivered) >
        before('gatepost_webhook_attempt_duration_seconds_count', delivered),
    );
  });
});

describe('the request log', () => {
  /** Gatepost's JSON log lines so far (its other output is plain lines). */
  const lines = () =>
    gp.output.split('\n').flatMap((l): Record<string, unknown>[] => {
      try {
        return l.startsWith('{') ? [JSON.parse(l)] : [];
      } catch {
        return []; // a line still being written
      }
    });

  it('writes one JSON line per request with its x-request-id, which the delivery lines name too, and never a key', async () => {
    const requestId = `e2e-${randomUUID()}`;
    const sent = await gp.request('POST', '/v1/emails', {
      key: tenant.live,
      headers: { 'x-request-id': requestId },
      body: { from: 'app@sender.example', to: 'carol@example.com', subject: 'Hi', html: '<p>Hi</p>' },
    });
    expect(sent.status).toBe(202);
    expect(sent.headers.get('x-request-id')).toBe(requestId);
    const line = await eventually(() => lines().find((l) => l.req_id === requestId && l.msg === 'request'));
    expect(line).toMatchObject({ level: 30, method: 'POST', url: '/v1/emails', status: 202 });
    expect(lines().filter((l) => l.req_id === requestId && l.msg === 'request')).toHaveLength(1);
    // On Dapr the delivery lines are written by the actor host.
    if (embedded) {
      const delivery = await eventually(() => lines().find((l) => l.req_id === requestId && l.msg === 'delivery attempt'));
      expect(delivery).toMatchObject({ message_id: sent.body.id, outcome: 'sent', attempt: 1 });
    }
    for (const secret of [tenant.live, tenant.sandbox, tenant.publicKey, ADMIN_TOKEN]) expect(gp.output).not.toContain(secret);
  });

  it('writes no line for the links in sent mail, whose URLs hold tokens', async () => {
    const link = `e2e-${randomUUID()}`;
    const after = `e2e-${randomUUID()}`;
    expect((await gp.request('GET', '/t/c/not-a-token', { headers: { 'x-request-id': link } })).status).toBe(404);
    expect((await gp.request('GET', '/u/not-a-token', { headers: { 'x-request-id': link } })).status).toBe(404);
    await gp.request('GET', '/healthz', { headers: { 'x-request-id': after } });
    // Lines are written in order: once the later request's line is there, the links' would be.
    await eventually(() => lines().find((l) => l.req_id === after));
    expect(lines().filter((l) => l.req_id === link)).toEqual([]);
    expect(gp.output).not.toContain('not-a-token');
  });

  it('gives a request without a usable x-request-id one of its own', async () => {
    const answered = await gp.request('GET', '/healthz', { headers: { 'x-request-id': 'has spaces and "quotes"' } });
    const id = answered.headers.get('x-request-id')!;
    expect(id).toMatch(/^req_[0-9a-z]{26}$/);
    await eventually(() => lines().find((l) => l.req_id === id && l.url === '/healthz'));
  });
});

describe('GATEPOST_METRICS=false', () => {
  it('serves no GET /metrics, and sends go on', async () => {
    const quiet = await startGatepost({ env: { GATEPOST_METRICS: 'false' } });
    try {
      const t = await quiet.tenant();
      expect((await quiet.request('GET', '/metrics')).status).toBe(404);
      const sent = await quiet.request('POST', '/v1/emails', {
        key: t.sandbox,
        body: { to: 'ann@example.com', subject: 'Hi', html: '<p>Hi</p>' },
      });
      expect(sent.status).toBe(202);
      await eventually(
        async () => (await quiet.request('GET', `/v1/messages/${sent.body.id}`, { key: t.sandbox })).body.status === 'sent',
      );
    } finally {
      await quiet.dispose();
    }
  });
});
