// A complaint and a late bounce taken by the intake reach the tenant's webhook endpoint, signed
// and posted by the same fan-out as every lifecycle event: the whole process's actors
// (registerActors), a real HTTPS receiver on loopback, the loopback let through the SSRF guard.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { registerActors } from '../../app/gatepost.ts';
import { actor } from '../../runtime/runtime.port.ts';
import { EmbeddedRuntime } from '../../runtime/embedded/runtime.sqlite.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { startReceiver, type Receiver } from '../../test/harness/receiver.harness.ts';
import { unreachableRelay } from '../../test/harness/relay.harness.ts';
import { NO_SIGNERS } from '../../test/harness/domains.harness.ts';
import { SsrfGuard } from '../../webhooks/ssrf.guard.ts';
import { ReceiptKeys } from '../../mta/receipt.keys.ts';
import { messageActor } from '../../actors/message/message.actor.ts';
import { admitArgs, attemptOutcome } from '../../actors/message/message.testkit.ts';
import { bouncesIntake } from './bounces.intake.ts';

const fixture = (name: string) => readFileSync(new URL(`../../mail/fixtures/reports/${name}`, import.meta.url));
const dkim = { selector: 's', public_key: 'p', private_key: '-----BEGIN PRIVATE KEY-----\nk\n-----END PRIVATE KEY-----\n' };

let h: Harness;
let catalog: SqliteCatalog;
let runtime: EmbeddedRuntime;
let receiver: Receiver;
let drain: () => Promise<void>;

afterEach(async () => {
  await drain();
  await runtime.stop();
  await receiver.close();
  await catalog.close();
  await h.cleanup();
});

it('posts email.complained and a late email.bounced to the endpoints subscribed to them', async () => {
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.db'));
  runtime = new EmbeddedRuntime({ file: h.file, log: () => {} });
  ({ drain } = registerActors(runtime, {
    catalog,
    transport: await unreachableRelay(),
    receiptKeys: new ReceiptKeys(catalog),
    signers: NO_SIGNERS,
    retrySchedule: [60_000],
    horizonMs: 86_400_000,
    webhooks: {
      guard: new SsrfGuard({ allow: ['127.0.0.0/8'] }),
      retrySchedule: [50],
      timeoutMs: 5_000,
      disableAfterMs: 86_400_000,
    },
  }));
  await runtime.start();
  receiver = await startReceiver();
  await catalog.createTenant({ id: 'ten_shop', name: 'shop', default_from: null, quota: { per_second: null, per_day: null } });
  const d = await catalog.createDomain({
    id: 'dom_shop',
    tenant_id: 'ten_shop',
    name: 'shop.example',
    dkim: { rsa: dkim, ed25519: dkim },
    tracking_host: null,
  });
  await catalog.recordDomainCheck('ten_shop', d.id, { status: 'verified', checks: {} });
  await catalog.createWebhook({
    id: 'whk_reports',
    tenant_id: 'ten_shop',
    url: `${receiver.url}/hook`,
    events: ['email.complained', 'email.bounced'],
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  });
  // Live messages, scheduled far off so that no delivery of this test's runs, then recorded as
  // accepted by their MX, as the delivery would.
  for (const [id, to] of [
    ['msg_7yho01', 'reader@yahoo.com'],
    ['msg_7exm01', 'gone@example.org'],
  ] as const) {
    const message = actor(runtime, messageActor, id);
    await message.admit(
      admitArgs({ tenant_id: 'ten_shop', content: { ...admitArgs().content, to }, send_at: '2999-01-01T00:00:00.000Z' }),
    );
    await message.recordAttempt(
      attemptOutcome({ attempt: 1, result: 'sent', smtp_code: 250, domain: to.split('@')[1], recipients: [to] }),
    );
  }

  const intake = bouncesIntake({ invoker: runtime, catalog });
  const at = new Date().toISOString();
  await intake.take({
    rcpt: 'fbl@bounces.shop.example',
    mailFrom: '',
    raw: fixture('yahoo-arf.eml'),
    remoteAddress: '203.0.113.80',
    receivedAt: at,
  });
  await intake.take({
    rcpt: 'b+msg_7exm01@bounces.shop.example',
    mailFrom: '',
    raw: fixture('exim-dsn.eml'),
    remoteAddress: '192.0.2.40',
    receivedAt: at,
  });

  await eventually(() => receiver.received.length >= 2, 15_000);
  const posted = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });
  expect(posted.map((p) => [p.type, p.data.message_id, p.data.recipients]).sort()).toEqual([
    ['email.bounced', 'msg_7exm01', ['gone@example.org']],
    ['email.complained', 'msg_7yho01', ['reader@yahoo.com']],
  ]);
  expect(receiver.received.every((r) => typeof r.headers['x-service-signature'] === 'string')).toBe(true);
});
