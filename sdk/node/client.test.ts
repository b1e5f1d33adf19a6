// The client against a real Gatepost process: sends with the sandbox key, the message and its
// timeline, following it to its end, the coded errors, idempotency, each resource's calls, the
// event feed; and the operation table held against the served /openapi.json.
import { openAsBlob } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startGatepost, type GatepostProcess } from '../../test/harness/gatepost.harness.ts';
import { Gatepost, GatepostError, OPERATIONS, type Event } from './index.ts';
import { gatepostErrorOf } from '../../test/harness/sdk.harness.ts';
import { startDns } from '../../test/harness/dns.harness.ts';
import { publishSenders, receiveInbound, type ReceivedInbound } from '../../test/harness/inbound.harness.ts';

let gp: GatepostProcess;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;
let sandbox: Gatepost;
let live: Gatepost;
/** Another tenant, with a message its inbound MX received (the first one has no inbound mail). */
let receiver: Gatepost;
let received: ReceivedInbound;

beforeAll(async () => {
  // DNS answers while the inbound domain is verified and its mail received, and is closed then.
  const dns = await startDns();
  publishSenders(dns);
  // Webhook endpoints on loopback pass the SSRF guard only when allowed.
  gp = await startGatepost({ env: { GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8', GATEPOST_DNS_SERVERS: dns.address } });
  tenant = await gp.tenant();
  sandbox = new Gatepost({ apiKey: tenant.sandbox, baseUrl: gp.url });
  live = new Gatepost({ apiKey: tenant.live, baseUrl: gp.url });
  const inboundTenant = await gp.tenant();
  receiver = new Gatepost({ apiKey: inboundTenant.live, baseUrl: gp.url });
  try {
    received = await receiveInbound(gp, dns, inboundTenant.live, 'inbound.test');
  } finally {
    await dns.close();
  }
});
afterAll(async () => {
  await gp?.dispose();
});

describe('OPERATIONS', () => {
  it('names only operations the served OpenAPI document has, with the same method and path', async () => {
    const doc = (await (await fetch(`${gp.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [name, op] of Object.entries(OPERATIONS)) {
      expect(doc.paths[op.path]?.[op.method.toLowerCase()], `${name}: ${op.method} ${op.path}`).toBeDefined();
    }
  });
});

describe('sending', () => {
  it('sends with the sandbox key, reads the message, and follows its timeline to email.sent', async () => {
    const sent = await sandbox.send({
      to: 'ann@example.com',
      subject: 'Hi {{name}}',
      html: '<p>Hi {{name}}</p>',
      data: { name: 'Ann' },
    });
    expect(sent).toMatchObject({ status: 'queued', to: 'ann@example.com', sandbox: true, replayed: false });
    expect(sent.id).toMatch(/^msg_/);

    const message = await sandbox.messages.get(sent.id);
    expect(message).toMatchObject({ id: sent.id, subject: 'Hi Ann', sandbox: true });
    expect(message.events[0]?.type).toBe('message.accepted');

    const followed: Event[] = [];
    for await (const event of sandbox.messages.follow(sent.id, { intervalMs: 100 })) followed.push(event);
    expect(followed.map((e) => e.type)).toEqual(['message.accepted', 'message.queued', 'email.sent']);
    expect(followed.at(-1)?.data).toMatchObject({ message_id: sent.id, sandbox: true });
    expect((await sandbox.messages.timeline(sent.id)).map((e) => e.id)).toEqual(followed.map((e) => e.id));

    const captured = await eventually(async () => (await sandbox.sandbox.list()).data.find((c) => c.message_id === sent.id));
    expect(captured.subject).toBe('Hi Ann');
    expect((await sandbox.sandbox.get(sent.id)).html).toBe('<p>Hi Ann</p>');
  });

  it('replays a send with the same idempotency key, and refuses the key with another body', async () => {
    const first = await sandbox.send({ to: 'bob@example.com', subject: 'Once', html: '<p>1</p>' }, { idempotencyKey: 'order-1' });
    const again = await sandbox.send({ to: 'bob@example.com', subject: 'Once', html: '<p>1</p>', idempotency_key: 'order-1' });
    expect(again).toEqual({ ...first, replayed: true });
    const reused = await gatepostErrorOf(
      sandbox.send({ to: 'bob@example.com', subject: 'Twice', html: '<p>2</p>' }, { idempotencyKey: 'order-1' }),
    );
    expect(reused).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
  });

  it('sends a batch, each item on its own, with a batch key that makes a retry send nothing twice', async () => {
    const items = [
      { to: 'c1@example.com', subject: 'B', html: '<p>b</p>' },
      { to: 'not an address', subject: 'B', html: '<p>b</p>' },
    ];
    const result = await sandbox.batch(items, { idempotencyKey: 'batch-1' });
    expect(result).toMatchObject({ accepted: 1, refused: 1 });
    expect(result.results[1]).toMatchObject({ index: 1, error: { code: 'invalid_request' } });
    const retried = await sandbox.batch(items, { idempotencyKey: 'batch-1' });
    expect(retried.results[0]).toMatchObject({ id: (result.results[0] as { id: string }).id, replayed: true });
  });
});

describe('errors', () => {
  it("throws the API's code, status, message and details", async () => {
    const unknownKey = new Gatepost({ apiKey: 'gp_live_not-a-key', baseUrl: gp.url });
    expect(await gatepostErrorOf(unknownKey.messages.get('msg_x'))).toMatchObject({ code: 'invalid_api_key', status: 401 });
    expect(await gatepostErrorOf(sandbox.messages.get('msg_00000000000000000000000000'))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
    const invalid = await gatepostErrorOf(sandbox.send({ subject: 'No recipient', html: '<p>x</p>' }));
    expect(invalid).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(invalid.details.map((d) => d.field)).toContain('to');
    // A sandbox key never manages what live mail depends on.
    expect(await gatepostErrorOf(sandbox.suppressions.add({ address: 'x@example.com' }))).toMatchObject({
      code: 'insufficient_scope',
      status: 403,
    });
  });

  it('answers receipt_not_found for a message no server has accepted', async () => {
    const sent = await sandbox.send({ to: 'r@example.com', subject: 'R', html: '<p>r</p>' });
    expect(await gatepostErrorOf(sandbox.messages.receipt(sent.id))).toMatchObject({ code: 'receipt_not_found', status: 404 });
  });
});

describe('resources', () => {
  it('creates, lists, gets, updates and deletes a template, and sends with it', async () => {
    const made = await live.templates.create({ slug: 'welcome', subject: 'Welcome {{name}}', html: '<p>Hello {{name}}</p>' });
    expect(made).toMatchObject({ slug: 'welcome', text: null, to: null });
    expect((await live.templates.list()).map((t) => t.slug)).toContain('welcome');
    expect(await live.templates.update('welcome', { text: 'Hello {{name}}' })).toMatchObject({ text: 'Hello {{name}}' });
    expect((await sandbox.templates.get('welcome')).subject).toBe('Welcome {{name}}');
    const sent = await sandbox.send({ to: 'ann@example.com', template: 'welcome', data: { name: 'Ann' } });
    expect((await sandbox.messages.get(sent.id)).subject).toBe('Welcome Ann');
    expect(await gatepostErrorOf(live.templates.create({ slug: 'welcome', subject: 's', html: 'h' }))).toMatchObject({
      code: 'template_exists',
    });
    await live.templates.delete('welcome');
    expect(await gatepostErrorOf(live.templates.get('welcome'))).toMatchObject({ code: 'not_found' });
  });

  it('adds, checks, lists and removes a suppression, which refuses sends meanwhile', async () => {
    expect(await live.suppressions.add({ address: 'Gone@Example.com', detail: 'asked' })).toMatchObject({
      address: 'gone@example.com',
      reason: 'manual',
    });
    expect((await live.suppressions.get('gone@example.com')).detail).toBe('asked');
    await eventually(async () => (await live.suppressions.list()).data.some((s) => s.address === 'gone@example.com'));
    expect(await gatepostErrorOf(sandbox.send({ to: 'gone@example.com', subject: 's', html: 'h' }))).toMatchObject({
      code: 'recipient_suppressed',
      status: 422,
    });
    await live.suppressions.remove('gone@example.com');
    expect(await gatepostErrorOf(live.suppressions.get('gone@example.com'))).toMatchObject({ code: 'not_found' });
  });

  it('validates an address and a batch; a public key may not', async () => {
    // This Gatepost asks DNS at a loopback port nothing listens on: a valid address is unknown.
    expect(await sandbox.validate('ann@example.com')).toMatchObject({
      address: 'ann@example.com',
      result: 'unknown',
      reasons: ['dns_unavailable'],
      checks: { syntax: true, mx: null, role: false, suppressed: false },
    });
    const results = await live.validateBatch(['"ann@example.com', 'support@example.com']);
    expect(results.map((r) => [r.address, r.result, r.reasons])).toEqual([
      ['"ann@example.com', 'undeliverable', ['unpaired_quote']],
      ['support@example.com', 'unknown', ['dns_unavailable', 'role_account']],
    ]);
    expect(await gatepostErrorOf(live.validateBatch([]))).toMatchObject({ code: 'invalid_request', status: 400 });
    const browser = new Gatepost({ apiKey: tenant.publicKey, baseUrl: gp.url });
    expect(await gatepostErrorOf(browser.validate('ann@example.com'))).toMatchObject({ code: 'key_not_allowed', status: 403 });
  });

  it('creates a webhook endpoint with its secret once, updates, tests, rotates and deletes it', async () => {
    const made = await live.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['email.sent'] });
    expect(made.secret).toMatch(/^whsec_/);
    const listed = await live.webhooks.list();
    expect(listed.map((w) => w.id)).toContain(made.id);
    expect(listed.find((w) => w.id === made.id)).not.toHaveProperty('secret');
    expect(await live.webhooks.update(made.id, { events: ['email.sent', 'email.bounced'] })).toMatchObject({
      events: ['email.sent', 'email.bounced'],
    });
    expect((await live.webhooks.test(made.id)).type).toBe('webhook.test');
    await eventually(async () => (await live.webhooks.deliveries(made.id)).length > 0);
    const rotated = await live.webhooks.rotate(made.id);
    expect(rotated.secret).not.toBe(made.secret);
    await live.webhooks.delete(made.id);
    expect(await gatepostErrorOf(live.webhooks.get(made.id))).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('creates a domain with its DNS records, lists, gets, verifies (nothing published: pending) and deletes it', async () => {
    const made = await live.domains.create('shop.example');
    expect(made.status).toBe('pending');
    expect(made.records.map((r) => r.purpose)).toEqual(expect.arrayContaining(['dkim', 'spf', 'dmarc', 'return_path']));
    expect((await live.domains.list()).map((d) => d.id)).toContain(made.id);
    expect((await live.domains.get(made.id)).name).toBe('shop.example');
    const checked = await live.domains.verify(made.id);
    expect(checked.status).toBe('pending');
    expect(checked.checked_at).not.toBeNull();
    await live.domains.delete(made.id);
    expect(await gatepostErrorOf(live.domains.get(made.id))).toMatchObject({ code: 'not_found' });
  });
});

describe('the event feed', () => {
  it('answers the events after a cursor, held open until one comes', async () => {
    const { cursor, data } = await sandbox.events.list();
    expect(data).toEqual([]);
    const waiting = sandbox.events.list({ after: cursor, waitSeconds: 20 });
    const sent = await sandbox.send({ to: 'feed@example.com', subject: 'Feed', html: '<p>f</p>' });
    const page = await waiting;
    expect(page.data).toEqual([
      expect.objectContaining({ type: 'email.sent', data: expect.objectContaining({ message_id: sent.id }) }),
    ]);
    expect(page.cursor).not.toBe(cursor);
  });
});

describe('inbound and deliverability', () => {
  it('refuses an inbound route on a domain not verified, and finds no unknown route or message', async () => {
    const refused = await gatepostErrorOf(live.inbound.createRoute({ match: 'support@not-verified.example', action: 'store' }));
    expect([refused.status, refused.code]).toEqual([422, 'inbound_domain_not_verified']);
    expect(await live.inbound.listRoutes()).toEqual([]);
    expect((await gatepostErrorOf(live.inbound.getRoute('rte_nope'))).code).toBe('not_found');
    expect((await gatepostErrorOf(live.inbound.updateRoute('rte_nope', { action: 'store' }))).code).toBe('not_found');
    expect((await live.inbound.listMessages()).data).toEqual([]);
    expect((await gatepostErrorOf(live.inbound.getMessage('inm_nope'))).code).toBe('not_found');
  });

  it('downloads a received message byte for byte, and its attachment with its type and filename', async () => {
    expect(Buffer.from(await receiver.inbound.raw(received.id))).toEqual(received.raw);
    const attachment = await receiver.inbound.attachment(received.id, 0);
    expect(attachment).toMatchObject({ filename: 'receipt.txt', content_type: expect.stringMatching(/^text\/plain/) });
    expect(new TextDecoder().decode(attachment.content)).toBe('Order 1042, paid.\n');
    expect((await gatepostErrorOf(receiver.inbound.attachment(received.id, 1))).code).toBe('not_found');
    // Another tenant's message is one that does not exist.
    expect((await gatepostErrorOf(live.inbound.raw(received.id))).code).toBe('not_found');
  });

  it('reads a closed breaker, the queue and no reports for a tenant whose mail neither bounces nor complains', async () => {
    const reputation = await live.reputation();
    expect(reputation).toMatchObject({ status: 'closed', window: { hard_bounces: 0, complaints: 0 } });
    expect(Array.isArray(reputation.domains)).toBe(true);
    for (const entry of await live.queue()) expect(entry.destination).toEqual(expect.any(String));
    expect(await live.reports({ limit: 10 })).toEqual({ data: [], next_cursor: null });
  });
});

describe('audiences', () => {
  it('creates an audience, imports a CSV file streamed from disk, and reads, updates and removes its contacts', async () => {
    const audience = await live.audiences.create('Newsletter');
    expect(audience).toMatchObject({ id: expect.stringMatching(/^aud_/), name: 'Newsletter', contacts: 0 });
    const dir = await mkdtemp(join(tmpdir(), 'gatepost-sdk-csv-'));
    try {
      const file = join(dir, 'contacts.csv');
      await writeFile(file, 'email,name,plan\nann@example.com,Ann,pro\nbob@example,Bob,free\ncy@example.com,Cy,free\n');
      expect(await live.audiences.importContacts(audience.id, await openAsBlob(file))).toEqual({
        added: 2,
        updated: 0,
        refused_count: 1,
        refused: [{ row: 3, email: 'bob@example', reason: 'not a valid email address' }],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const ann = await live.audiences.getContact(audience.id, 'ann@example.com');
    expect(ann).toMatchObject({ name: 'Ann', data: { plan: 'pro' }, unsubscribed: false });
    expect(await live.audiences.updateContact(audience.id, ann.id, { unsubscribed: true })).toMatchObject({ unsubscribed: true });
    const added = await live.audiences.addContact(audience.id, { email: 'dee@example.com', data: { plan: 'free' } });
    const again = await gatepostErrorOf(live.audiences.addContact(audience.id, { email: 'dee@example.com' }));
    expect([again.status, again.code]).toEqual([409, 'contact_exists']);
    expect((await live.audiences.listContacts(audience.id, { limit: 10 })).data.map((c) => c.email).sort()).toEqual([
      'ann@example.com',
      'cy@example.com',
      'dee@example.com',
    ]);
    await live.audiences.removeContact(audience.id, added.id);
    expect((await live.audiences.get(audience.id)).contacts).toBe(2);
    expect((await live.audiences.list()).map((a) => a.id)).toContain(audience.id);
    await live.audiences.delete(audience.id);
    expect((await gatepostErrorOf(live.audiences.get(audience.id))).code).toBe('not_found');
  });
});

describe('automations', () => {
  it('creates an automation, starts a run with a custom event, reads the run, disables and deletes it', async () => {
    await live.templates.create({ slug: 'sdk-automation', subject: 'On {{plan}}', html: '<p>{{name}} is on {{plan}}</p>' });
    const audience = await live.audiences.create('Customers');
    await live.audiences.addContact(audience.id, { email: 'eve@example.com', name: 'Eve', data: { plan: 'free' } });
    const automation = await live.automations.create({
      name: 'Upgrades',
      audience_id: audience.id,
      trigger: { type: 'custom_event', name: 'upgraded' },
      steps: [
        { id: 'pause', type: 'wait', duration: 'PT1S' },
        { id: 'hello', type: 'send', template: 'sdk-automation', from: 'Shop <hi@shop.example>' },
      ],
      sandbox: true,
    });
    expect(automation).toMatchObject({ id: expect.stringMatching(/^aut_/), enabled: true, steps: [{ seconds: 1 }, {}] });
    expect((await live.automations.list()).map((a) => a.id)).toContain(automation.id);

    const posted = await live.events.post({ name: 'upgraded', email: 'eve@example.com', data: { plan: 'pro' } });
    expect(posted.runs).toHaveLength(1);
    const run = await eventually(async () => {
      const r = await live.automations.run(automation.id, posted.runs[0]!);
      return r.status === 'completed' && r;
    });
    expect(run.timeline.map((e) => e.type)).toEqual(['run.started', 'step.waiting', 'step.sent', 'run.completed']);
    // The run's send step admitted the message; its capture follows a moment later.
    const captured = await eventually(() =>
      sandbox.sandbox.get(run.timeline[2]!.data.message_id as string).catch(() => undefined),
    );
    expect(captured.subject).toBe('On pro');
    expect((await eventually(async () => (await live.automations.runs(automation.id)).data[0])).id).toBe(run.id);

    const cycle = await gatepostErrorOf(
      live.automations.create({
        name: 'Loop',
        audience_id: audience.id,
        trigger: { type: 'contact_added' },
        steps: [
          { id: 'a', type: 'send', template: 'sdk-automation', from: 'Shop <hi@shop.example>' },
          { id: 'b', type: 'if', opened: 'a', else: 'b' },
        ],
      }),
    );
    expect([cycle.status, cycle.code]).toEqual([422, 'automation_cycle']);
    const stranger = await gatepostErrorOf(live.events.post({ name: 'upgraded', email: 'nobody@example.com' }));
    expect([stranger.status, stranger.code]).toEqual([404, 'contact_not_found']);

    expect(await live.automations.update(automation.id, { enabled: false })).toMatchObject({ enabled: false });
    await live.automations.delete(automation.id);
    expect((await gatepostErrorOf(live.automations.get(automation.id))).code).toBe('not_found');
  });
});

describe('broadcasts', () => {
  it('drafts, sends and follows a sandbox broadcast to its end; refuses what is no draft, with its code', async () => {
    const audience = await live.audiences.create('Readers');
    await live.audiences.importContacts(audience.id, 'email,name\nann@example.com,Ann\nbob@example.com,Bob\n');
    const draft = await live.broadcasts.create({
      name: 'Hello',
      audience_id: audience.id,
      from: 'News <news@shop.example>',
      subject: 'Hello {{name}}',
      html: '<p>Hello {{name}}</p>',
      sandbox: true,
    });
    expect(draft).toMatchObject({ id: expect.stringMatching(/^bro_/), status: 'draft', progress: null, results: null });
    expect((await live.broadcasts.list({ limit: 10 })).data.map((b) => b.id)).toContain(draft.id);

    expect((await live.broadcasts.send(draft.id)).status).toMatch(/^(sending|sent)$/);
    const sent = await eventually(async () => {
      const b = await live.broadcasts.get(draft.id);
      return b.status === 'sent' && b.results?.sent === 2 && b;
    });
    expect(sent.progress).toMatchObject({ admitted: 2, refused: { suppressed: 0, unsubscribed: 0, other: 0 } });
    const subjects = (await sandbox.sandbox.list()).data.map((c) => c.subject);
    expect(subjects).toEqual(expect.arrayContaining(['Hello Ann', 'Hello Bob']));

    const again = await gatepostErrorOf(live.broadcasts.send(draft.id));
    expect([again.status, again.code]).toEqual([409, 'broadcast_already_sent']);
    expect((await gatepostErrorOf(live.broadcasts.delete(draft.id))).code).toBe('broadcast_not_draft');

    const later = await live.broadcasts.create({
      name: 'Later',
      audience_id: audience.id,
      from: 'news@shop.example',
      subject: 's',
      html: 'h',
      sandbox: true,
    });
    const scheduled = await live.broadcasts.send(later.id, new Date(Date.now() + 3_600_000));
    expect(scheduled.status).toBe('scheduled');
    expect((await live.broadcasts.cancel(later.id)).status).toBe('cancelled');
    const gone = await live.broadcasts.create({
      name: 'Gone',
      audience_id: audience.id,
      from: 'news@shop.example',
      subject: 's',
      html: 'h',
      sandbox: true,
    });
    await live.broadcasts.delete(gone.id);
    expect((await gatepostErrorOf(live.broadcasts.get(gone.id))).code).toBe('not_found');
  });
});
