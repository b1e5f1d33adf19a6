// Idempotency keys: a repeat is a replay, never a second send.
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const body = (to: string, extra: Record<string, unknown> = {}) => ({ to, subject: 'Once', html: '<p>once</p>', ...extra });
const deliveredTo = (to: string) => suite.relay.received.filter((r) => r.to.includes(to)).length;

describe('idempotency', () => {
  it('replays the first response with Idempotent-Replayed and sends once (field)', async () => {
    const first = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem1@example.com', { idempotency_key: 'order-1' }),
    });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem1@example.com', { idempotency_key: 'order-1' }),
    });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    await eventually(() => deliveredTo('idem1@example.com') === 1);
    // The timeline is one message with one acceptance.
    const t = await suite.gp.request('GET', `/v1/messages/${first.body.id}`, { key: suite.tenant.live });
    expect(t.body.events.filter((e: { type: string }) => e.type === 'message.accepted')).toHaveLength(1);
    await eventually(
      async () =>
        (await suite.gp.request('GET', `/v1/messages/${first.body.id}`, { key: suite.tenant.live })).body.status === 'sent',
    );
    expect(deliveredTo('idem1@example.com')).toBe(1);
  });

  it('accepts the key as the Idempotency-Key header too', async () => {
    const headers = { 'idempotency-key': 'hdr-1' };
    const first = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      headers,
      body: body('idem2@example.com'),
    });
    const again = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      headers,
      body: body('idem2@example.com'),
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const differ = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      headers,
      body: body('idem2@example.com', { idempotency_key: 'other' }),
    });
    expect(differ.status).toBe(400);
  });

  it('refuses the same key with a different body (422)', async () => {
    await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem3@example.com', { idempotency_key: 'k3' }),
    });
    const changed = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem3@example.com', { idempotency_key: 'k3', subject: 'Changed' }),
    });
    expect(changed.status).toBe(422);
    expect(changed.body.error.code).toBe('idempotency_key_reused');
  });

  it('keeps keys per tenant: another tenant may use the same key', async () => {
    const other = await suite.gp.tenant();
    const mine = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem4@example.com', { idempotency_key: 'shared' }),
    });
    const theirs = await suite.gp.request('POST', '/v1/emails', {
      key: other.live,
      body: body('idem4@example.com', { idempotency_key: 'shared' }),
    });
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('keeps sandbox and live keys apart: a live send after a sandbox one with the same key is sent', async () => {
    const sandboxed = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.sandbox,
      body: body('idem7@example.com', { idempotency_key: 'mode-1' }),
    });
    expect(sandboxed.status).toBe(202);
    expect(sandboxed.body.sandbox).toBe(true);
    const live = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem7@example.com', { idempotency_key: 'mode-1' }),
    });
    expect(live.status).toBe(202);
    expect(live.headers.get('idempotent-replayed')).toBeNull();
    expect(live.body.sandbox).toBe(false);
    expect(live.body.id).not.toBe(sandboxed.body.id);
    await eventually(() => deliveredTo('idem7@example.com') === 1);
    // Each mode's repeat is still its own replay.
    const liveAgain = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem7@example.com', { idempotency_key: 'mode-1' }),
    });
    expect(liveAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(liveAgain.body).toEqual(live.body);
    const sandboxAgain = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.sandbox,
      body: body('idem7@example.com', { idempotency_key: 'mode-1' }),
    });
    expect(sandboxAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(sandboxAgain.body).toEqual(sandboxed.body);
  });

  it('keeps sandbox and live keys apart: a sandbox send after a live one with the same key is captured', async () => {
    const live = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem8@example.com', { idempotency_key: 'mode-2' }),
    });
    expect(live.status).toBe(202);
    expect(live.body.sandbox).toBe(false);
    const sandboxed = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.sandbox,
      body: body('idem8@example.com', { idempotency_key: 'mode-2' }),
    });
    expect(sandboxed.status).toBe(202);
    expect(sandboxed.headers.get('idempotent-replayed')).toBeNull();
    expect(sandboxed.body.sandbox).toBe(true);
    expect(sandboxed.body.id).not.toBe(live.body.id);
    // The sandbox message is captured, and the live one delivered once.
    await eventually(async () => {
      const m = await suite.gp.request('GET', `/v1/messages/${sandboxed.body.id}`, { key: suite.tenant.sandbox });
      return m.body.events.some((e: { type: string; data: { sandbox?: boolean } }) => e.type === 'email.sent' && e.data.sandbox);
    });
    await eventually(() => deliveredTo('idem8@example.com') === 1);
  });

  it('turns concurrent requests with one key into exactly one message', async () => {
    const requests = Array.from({ length: 20 }, () =>
      suite.gp.request('POST', '/v1/emails', {
        key: suite.tenant.live,
        body: body('idem5@example.com', { idempotency_key: 'race' }),
      }),
    );
    const answers = await Promise.all(requests);
    for (const a of answers) expect([202, 409]).toContain(a.status);
    const accepted = answers.filter((a) => a.status === 202);
    expect(new Set(accepted.map((a) => a.body.id)).size).toBe(1);
    expect(accepted.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    const id = accepted[0]!.body.id;
    await eventually(
      async () => (await suite.gp.request('GET', `/v1/messages/${id}`, { key: suite.tenant.live })).body.status === 'sent',
    );
    expect(deliveredTo('idem5@example.com')).toBe(1);
  });

  it('survives a restart: a repeat after restart is still a replay', async () => {
    const first = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem6@example.com', { idempotency_key: 'restart' }),
    });
    await suite.gp.restart();
    const again = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: body('idem6@example.com', { idempotency_key: 'restart' }),
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
  });
});
