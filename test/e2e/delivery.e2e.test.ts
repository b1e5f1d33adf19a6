// Delivery through the relay: what each remote answer does to the timeline and the suppression
// list, retries through reminders, and one transaction for recipients on several domains.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { eventually, startGatepost } from '../harness/gatepost.harness.ts';
import { startRelay } from '../harness/relay.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const send = (to: string) =>
  suite.gp.request('POST', '/v1/emails', { key: suite.tenant.live, body: { to, subject: 'Delivery', html: '<p>d</p>' } });
const timeline = async (id: string) => (await suite.gp.request('GET', `/v1/messages/${id}`, { key: suite.tenant.live })).body;
/** The message's timeline once its status is `status`. */
const timelineAt = (id: string, status: string) =>
  eventually(async () => {
    const x = await timeline(id);
    return x.status === status ? x : undefined;
  });
/** A Style P (Postmark) send: it takes a Cc, where the native API takes one recipient. */
const postmark = (To: string, Cc: string, Subject: string) =>
  suite.gp.request('POST', '/email', {
    body: { From: 'app@sender.example', To, Cc, Subject, HtmlBody: '<p>d</p>' },
    headers: { 'x-postmark-server-token': suite.tenant.live, accept: 'application/json' },
  });
const types = (t: { events: { type: string }[] }) => t.events.map((e) => e.type);

describe('delivery outcomes', () => {
  it('250: email.sent with the remote answer', async () => {
    const res = await send('ok@example.com');
    const t = await eventually(async () => ((await timeline(res.body.id)).status === 'sent' ? timeline(res.body.id) : undefined));
    const sent = t.events.find((e: { type: string }) => e.type === 'email.sent');
    expect(sent.data).toMatchObject({ to: 'ok@example.com', smtp_code: 250, attempt: 1, sandbox: false });
    expect(sent.data.response).toMatch(/^250/);
  });

  it('5xx: email.bounced, and the recipient is suppressed so the next send is refused', async () => {
    suite.relay.verdict = (rcpt) => (rcpt === 'nobody@example.com' ? 'reject' : 'accept');
    const res = await send('nobody@example.com');
    expect(res.status).toBe(202);
    const t = await timelineAt(res.body.id, 'bounced');
    expect(types(t)).toEqual(['message.accepted', 'message.queued', 'email.bounced']);
    expect(t.events[2].data).toMatchObject({ smtp_code: 550, bounce_type: 'hard' });
    expect(t.events[2].data.response).toContain('No such user');

    const entry = await suite.gp.request('GET', '/v1/suppressions/nobody@example.com', { key: suite.tenant.live });
    expect(entry.status).toBe(200);
    expect(entry.body.reason).toBe('hard_bounce');
    const again = await send('nobody@example.com');
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('recipient_suppressed');
    await eventually(async () =>
      (await suite.gp.request('GET', '/v1/suppressions', { key: suite.tenant.live })).body.data.some(
        (s: { address: string }) => s.address === 'nobody@example.com',
      ),
    );
  });

  it('4xx: deferred, retried by a reminder, then sent', async () => {
    let refusals = 0;
    suite.relay.verdict = (rcpt) => (rcpt === 'busy@example.com' && refusals++ < 2 ? 'defer' : 'accept');
    const res = await send('busy@example.com');
    const t = await timelineAt(res.body.id, 'sent');
    expect(types(t)).toEqual(['message.accepted', 'message.queued', 'message.deferred', 'message.deferred', 'email.sent']);
    const deferred = t.events[2];
    expect(deferred.data).toMatchObject({ smtp_code: 451, attempt: 1 });
    expect(Date.parse(deferred.data.retry_at)).toBeGreaterThan(Date.parse(deferred.created_at));
    // The retry waited for its reminder: it happened no earlier than the time the timeline promised.
    expect(Date.parse(t.events[3].created_at)).toBeGreaterThanOrEqual(Date.parse(deferred.data.retry_at));
    expect(t.events[4].data.attempt).toBe(3);
    expect(suite.relay.received.filter((r) => r.to.includes('busy@example.com'))).toHaveLength(1);
  });

  it('soft-bounces when the retries run out, without suppressing', async () => {
    suite.relay.verdict = (rcpt) => (rcpt === 'always-busy@example.com' ? 'defer' : 'accept');
    const res = await send('always-busy@example.com');
    const t = await timelineAt(res.body.id, 'bounced');
    // The test schedule is three 1 s waits: four attempts in all.
    expect(t.events.filter((e: { type: string }) => e.type === 'message.deferred')).toHaveLength(3);
    expect(t.events.at(-1).data).toMatchObject({ bounce_type: 'soft', attempt: 4 });
    expect((await suite.gp.request('GET', '/v1/suppressions/always-busy@example.com', { key: suite.tenant.live })).status).toBe(
      404,
    );
  });
});

describe('several recipient domains through the relay', () => {
  it('the relay gets one copy for every recipient, in one transaction; a retry only for the one it deferred', async () => {
    let refusals = 0;
    suite.relay.verdict = (rcpt) => (rcpt === 'cat@c.example' && refusals++ < 1 ? 'defer' : 'accept');
    const res = await postmark('ann@a.example', 'bob@b.example, cat@c.example', 'Three domains');
    expect(res.status).toBe(200);
    const id: string = res.body.MessageID;
    const t = await timelineAt(id, 'sent');
    const outcomes = t.events.filter((e: { data: { attempt?: number } }) => e.data.attempt !== undefined);
    expect(
      outcomes.map((e: { type: string; data: Record<string, unknown> }) => [
        e.type,
        e.data.attempt,
        e.data.recipients,
        e.data.domain,
      ]),
    ).toEqual([
      ['email.sent', 1, ['ann@a.example', 'bob@b.example'], undefined],
      ['message.deferred', 1, ['cat@c.example'], 'c.example'],
      ['email.sent', 2, ['cat@c.example'], 'c.example'],
    ]);
    // One transaction an attempt, whatever the domains: the relay routes each copy onwards.
    const got = suite.relay.received.filter((r) => r.messageId === t.message_id_header);
    expect(got.map((r) => r.to)).toEqual([['ann@a.example', 'bob@b.example'], ['cat@c.example']]);
  });

  it('the relay refusing every recipient, one for now and one for good: each its own outcome', async () => {
    let deferrals = 0;
    suite.relay.verdict = (rcpt) =>
      rcpt === 'gone@e.example' ? 'reject' : rcpt === 'wait@f.example' && deferrals++ < 1 ? 'defer' : 'accept';
    const res = await postmark('wait@f.example', 'gone@e.example', 'Both refused');
    expect(res.status).toBe(200);
    const t = await timelineAt(res.body.MessageID, 'bounced');
    const outcomes = t.events.filter((e: { data: { attempt?: number } }) => e.data.attempt !== undefined);
    expect(
      outcomes.map((e: { type: string; data: Record<string, unknown> }) => [
        e.type,
        e.data.attempt,
        e.data.recipients,
        e.data.smtp_code,
      ]),
    ).toEqual([
      ['message.deferred', 1, ['wait@f.example'], 451],
      ['email.bounced', 1, ['gone@e.example'], 550],
      ['email.sent', 2, ['wait@f.example'], 250],
    ]);
    expect((await suite.gp.request('GET', '/v1/suppressions/gone@e.example', { key: suite.tenant.live })).status).toBe(200);
  });
});

describe('relay unreachable', () => {
  it('retries after connection failures and delivers once the relay is back', async () => {
    // The relay's port is held by a server that hangs up at once, until the relay comes back: a
    // port merely left free was taken by a listener of the Gatepost started next (its own TLS
    // answered, "self-signed certificate"), and so was no failure to connect.
    const down = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const port = (down.address() as AddressInfo).port;
    const gp2 = await startGatepost({
      relayUrl: `smtp://127.0.0.1:${port}`,
      env: { GATEPOST_DELIVERY_RETRY: '1s,1s,1s,1s,1s,1s' },
    });
    try {
      const t = await gp2.tenant();
      const res = await gp2.request('POST', '/v1/emails', {
        key: t.live,
        body: { to: 'later@example.com', subject: 's', html: '<p>h</p>' },
      });
      const get = async () => (await gp2.request('GET', `/v1/messages/${res.body.id}`, { key: t.live })).body;
      const deferred = await eventually(async () => {
        const x = await get();
        return x.status === 'deferred' ? x : undefined;
      });
      expect(deferred.events.at(-1).data.smtp_code).toBeNull();
      expect(deferred.events.at(-1).data.response).toMatch(/ECONNREFUSED|connect/i);
      await new Promise((resolve) => down.close(resolve));
      const back = await startRelay(port);
      try {
        await eventually(() => back.received.find((r) => r.to.includes('later@example.com')));
        await eventually(async () => (await get()).status === 'sent');
      } finally {
        await back.close();
      }
    } finally {
      if (down.listening) down.close();
      await gp2.dispose();
    }
  });
});
