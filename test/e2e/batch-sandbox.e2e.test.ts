// POST /v1/emails/batch, and sandbox keys capturing instead of delivering.
import { describe, expect, it } from 'vitest';
import { observe } from '../harness/compat.harness.ts';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';

const suite = gatepostWithRelay();

const item = (to: string, extra: Record<string, unknown> = {}) => ({
  to,
  subject: 'Batch {{n}}',
  html: '<p>{{n}}</p>',
  ...extra,
});

describe('POST /v1/emails/batch', () => {
  it('answers one result per item, in order, each item through the gate on its own', async () => {
    await suite.gp.request('POST', '/v1/suppressions', {
      key: suite.tenant.live,
      body: { address: 'batch-suppressed@example.com' },
    });
    const res = await suite.gp.request('POST', '/v1/emails/batch', {
      key: suite.tenant.live,
      body: [
        item('b0@example.com', { data: { n: 0 } }),
        item('not-an-address'),
        item('batch-suppressed@example.com'),
        { to: 'b3@example.com', subject: 's' },
        item('b4@example.com', { attachments: [{ filename: 'x' }] }),
        item('b5@example.com', { data: { n: 5 } }),
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 2, refused: 4 });
    const r = res.body.results;
    expect(r.map((x: { index: number }) => x.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r[0]).toMatchObject({ status: 'queued', to: 'b0@example.com', replayed: false });
    expect(r[1].error).toMatchObject({ code: 'invalid_request', details: [{ field: 'to', message: expect.any(String) }] });
    expect(r[2].error.code).toBe('recipient_suppressed');
    expect(r[3].error).toMatchObject({ code: 'invalid_request', details: [{ field: 'html', message: 'is required' }] });
    expect(r[4].error.code).toBe('attachments_unsupported');
    expect(r[5]).toMatchObject({ status: 'queued', to: 'b5@example.com' });
    // Delivery order is not promised: wait for both accepted items.
    const b0 = await eventually(() => suite.relay.received.find((m) => m.to.includes('b0@example.com')));
    await eventually(() => suite.relay.received.some((m) => m.to.includes('b5@example.com')));
    expect(b0.parsed.subject).toBe('Batch 0');
  });

  it('takes 500 and refuses 501 whole', async () => {
    const five00 = Array.from({ length: 500 }, (_, i) => item(`many${i}@example.com`, { data: { n: i } }));
    const ok = await suite.gp.request('POST', '/v1/emails/batch', { key: suite.tenant.sandbox, body: five00 });
    expect(ok.status).toBe(200);
    expect(ok.body.accepted).toBe(500);
    expect(new Set(ok.body.results.map((x: { id: string }) => x.id)).size).toBe(500);
    await observe(suite).allCaptured(
      suite.tenant.sandbox,
      five00.map((x) => x.to),
    );

    const tooMany = await suite.gp.request('POST', '/v1/emails/batch', {
      key: suite.tenant.sandbox,
      body: [...five00, item('one-more@example.com')],
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/500/);
    expect((await suite.gp.request('POST', '/v1/emails/batch', { key: suite.tenant.sandbox, body: [] })).status).toBe(400);
    expect((await suite.gp.request('POST', '/v1/emails/batch', { key: suite.tenant.sandbox, body: { to: 'x' } })).status).toBe(
      400,
    );
  });

  it('derives a key per item from a batch Idempotency-Key, so a retried batch sends nothing twice', async () => {
    const body = [item('ib0@example.com'), item('ib1@example.com')];
    const headers = { 'idempotency-key': 'batch-1' };
    const first = await suite.gp.request('POST', '/v1/emails/batch', { key: suite.tenant.live, headers, body });
    const again = await suite.gp.request('POST', '/v1/emails/batch', { key: suite.tenant.live, headers, body });
    expect(again.body.results.map((x: { id: string }) => x.id)).toEqual(first.body.results.map((x: { id: string }) => x.id));
    expect(again.body.results.every((x: { replayed: boolean }) => x.replayed)).toBe(true);
    for (const to of ['ib0@example.com', 'ib1@example.com'])
      await eventually(() => suite.relay.received.some((m) => m.to.includes(to)));
    // A mail sent after the retried batch arrives; by then each item has still come once.
    await laterMailArrived(suite);
    for (const to of ['ib0@example.com', 'ib1@example.com'])
      expect(suite.relay.received.filter((m) => m.to.includes(to))).toHaveLength(1);
  });
});

describe('sandbox keys', () => {
  it('run the whole pipeline but capture instead of delivering', async () => {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.sandbox,
      body: {
        from: 'App <app@sender.example>',
        to: 'captured@example.com',
        subject: 'Hello {{name}}',
        html: '<p>Hi {{name}}</p>',
        data: { name: 'Sandy' },
        headers: { 'X-Campaign': 'spring' },
      },
    });
    expect(res.status).toBe(202);
    expect(res.body.sandbox).toBe(true);
    const t = await eventually(async () => {
      const x = await suite.gp.request('GET', `/v1/messages/${res.body.id}`, { key: suite.tenant.sandbox });
      return x.body.status === 'sent' ? x.body : undefined;
    });
    expect(t.events.map((e: { type: string }) => e.type)).toEqual(['message.accepted', 'message.queued', 'email.sent']);
    expect(t.events[2].data.sandbox).toBe(true);

    const inbox = await suite.gp.request('GET', '/v1/sandbox/messages', { key: suite.tenant.sandbox });
    const captured = inbox.body.data.find((c: { message_id: string }) => c.message_id === res.body.id);
    expect(captured).toMatchObject({
      from: 'App <app@sender.example>',
      to: 'captured@example.com',
      subject: 'Hello Sandy',
      html: '<p>Hi Sandy</p>',
      headers: { 'X-Campaign': 'spring', 'Message-ID': `<${res.body.id}@sender.example>` },
    });
    expect(captured.text.trim()).toBe('Hi Sandy');
    const one = await suite.gp.request('GET', `/v1/sandbox/messages/${res.body.id}`, { key: suite.tenant.sandbox });
    expect(one.body.subject).toBe('Hello Sandy');
    // A live mail sent after the capture arrives at the relay; the captured one never did.
    await laterMailArrived(suite);
    expect(suite.relay.received.some((m) => m.to.includes('captured@example.com'))).toBe(false);
  });

  it('are refused by the same gate (validation, suppression) as live keys', async () => {
    const bad = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.sandbox,
      body: { to: 'x', subject: 's', html: 'h' },
    });
    expect(bad.status).toBe(400);
  });

  it("keep each tenant's capture inbox to itself", async () => {
    const other = await suite.gp.tenant();
    const inbox = await suite.gp.request('GET', '/v1/sandbox/messages', { key: other.sandbox });
    expect(inbox.body.data).toEqual([]);
  });
});
