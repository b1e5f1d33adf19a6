// Automations over real sockets, on both runtimes (issue 25 item 3): a contact added starts a run
// that waits on a reminder and sends through the gate into the sandbox inbox; a condition on the
// first message's open; a custom event; a lifecycle event; an unsubscribe, a disable and a restart
// during a wait; and the definitions refused whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';

let gp: GatepostProcess;
let live: string;
let sandbox: string;

const FROM = 'Shop <hello@shop.example>';
/** Long enough for a test to act inside a wait (open, unsubscribe, disable) before it ends. */
const ACT_WITHIN = 8;
/** The timeline of a run, on Dapr too, takes a while through pub/sub and reminders. */
const WAIT_MS = 60_000;

beforeAll(async () => {
  gp = await startGatepost();
  const tenant = await gp.tenant();
  live = tenant.live;
  sandbox = tenant.sandbox;
  const template = await gp.request('POST', '/v1/templates', {
    key: live,
    body: { slug: 'welcome', subject: 'Welcome {{name}}', html: '<p>Hi {{name}}, you are on {{plan}}.</p>' },
  });
  expect(template.status).toBe(201);
});
afterAll(async () => {
  await gp?.dispose();
});

async function audience(): Promise<string> {
  const made = await gp.request('POST', '/v1/audiences', { key: live, body: { name: 'List' } });
  expect(made.status).toBe(201);
  return made.body.id as string;
}

async function automation(body: Record<string, unknown>): Promise<string> {
  const made = await gp.request('POST', '/v1/automations', { key: live, body: { name: 'Flow', sandbox: true, ...body } });
  expect(made.status).toBe(201);
  return made.body.id as string;
}

async function contact(audienceId: string, email: string, data: Record<string, unknown> = { plan: 'free' }): Promise<string> {
  const made = await gp.request('POST', `/v1/audiences/${audienceId}/contacts`, {
    key: live,
    body: { email, name: 'Ann', data },
  });
  expect(made.status).toBe(201);
  return made.body.id as string;
}

/** The automation's one run for `email`, once it is listed. */
const runFor = (automationId: string, email: string) =>
  eventually(async () => {
    const { body } = await gp.request('GET', `/v1/automations/${automationId}/runs`, { key: live });
    return (body.data as { id: string; email: string }[]).find((r) => r.email === email)?.id;
  }, WAIT_MS);

/** The run with its timeline once `done` says it is there. */
const runOnce = (automationId: string, runId: string, done: (run: any) => boolean) =>
  eventually(async () => {
    const { status, body } = await gp.request('GET', `/v1/automations/${automationId}/runs/${runId}`, { key: live });
    return status === 200 && done(body) && body;
  }, WAIT_MS);

const ended = (run: { status: string }) => ['completed', 'stopped', 'failed'].includes(run.status);

/** Captured messages to `email`, newest first, once there are `count`. */
const capturedTo = (email: string, count = 1, ms = WAIT_MS) =>
  eventually(async () => {
    const { body } = await gp.request('GET', '/v1/sandbox/messages?limit=1000', { key: sandbox });
    const found = (body.data as { to: string; subject: string; html: string; headers: Record<string, string> }[]).filter((m) =>
      m.to.includes(email),
    );
    return found.length >= count && found;
  }, ms);

describe('automations', () => {
  it('runs a contact added through a wait and a send captured in the sandbox inbox, with its timeline', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'contact_added' },
      steps: [
        { id: 'pause', type: 'wait', duration: 'PT2S' },
        { id: 'hello', type: 'send', template: 'welcome', from: FROM },
      ],
    });
    const listed = await gp.request('GET', `/v1/automations/${id}`, { key: live });
    expect(listed.body).toMatchObject({ enabled: true, sandbox: true, steps: [{ id: 'pause', seconds: 2 }, { id: 'hello' }] });

    await contact(aud, 'ann@example.com', { plan: 'pro' });
    const [mail] = await capturedTo('ann@example.com');
    expect(mail!.subject).toBe('Welcome Ann');
    expect(mail!.html).toContain('Hi Ann, you are on pro.');
    // A contact's mail is a list's: one-click unsubscribe on it.
    expect(mail!.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');

    const runId = await runFor(id, 'ann@example.com');
    const run = await runOnce(id, runId, ended);
    expect(run).toMatchObject({ status: 'completed', reason: null, trigger: { type: 'contact_added' } });
    expect(run.timeline.map((e: { type: string; step: string | null }) => [e.type, e.step])).toEqual([
      ['run.started', null],
      ['step.waiting', 'pause'],
      ['step.sent', 'hello'],
      ['run.completed', null],
    ]);
    const sent = run.timeline[2].data.message_id as string;
    const message = await gp.request('GET', `/v1/messages/${sent}`, { key: live });
    expect(message.body.events[0]).toMatchObject({
      type: 'message.accepted',
      data: { ingress: 'automation', stream: 'broadcast' },
    });
    // The wait lasted its duration, as the reminder fired it.
    expect(Date.parse(run.timeline[2].at) - Date.parse(run.timeline[1].at)).toBeGreaterThanOrEqual(2000);
    await eventually(async () => {
      const { body } = await gp.request('GET', `/v1/automations/${id}/runs`, { key: live });
      return body.data[0]?.status === 'completed';
    }, WAIT_MS);
  });

  it('starts the runs of contacts a CSV import adds', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'contact_added' },
      steps: [{ id: 'hello', type: 'send', template: 'welcome', from: FROM }],
    });
    const res = await fetch(`${gp.url}/v1/audiences/${aud}/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live}`, 'content-type': 'text/csv' },
      body: 'email,name,plan\ncsv1@example.com,Cy,team\ncsv2@example.com,Di,solo\n',
    });
    expect(res.status).toBe(200);
    expect((await capturedTo('csv2@example.com'))[0]!.html).toContain('Hi Di, you are on solo.');
    expect((await capturedTo('csv1@example.com'))[0]!.subject).toBe('Welcome Cy');
    await runFor(id, 'csv1@example.com');
  });

  it('branches on whether the contact opened the first message', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'contact_added' },
      steps: [
        { id: 'first', type: 'send', template: 'welcome', from: FROM },
        { id: 'pause', type: 'wait', duration: ACT_WITHIN },
        { id: 'check', type: 'if', opened: 'first', else: 'end' },
        { id: 'thanks', type: 'send', template: 'welcome', from: FROM, subject: 'Thanks for reading, {{name}}' },
      ],
    });
    await contact(aud, 'reader@example.com');
    await contact(aud, 'skipper@example.com');
    const [first] = await capturedTo('reader@example.com');
    await capturedTo('skipper@example.com');
    // The pixel of the first message, served by this Gatepost's API (on Dapr the actor host renders
    // links with its own default base; an operator sets GATEPOST_PUBLIC_URL).
    const pixel = /<img src="[^"]*(\/t\/o\/[^"]*)"/.exec(first!.html)![1]!;
    const opened = await fetch(`${gp.url}${pixel}`);
    expect(opened.status).toBe(200);

    const reader = await runOnce(id, await runFor(id, 'reader@example.com'), ended);
    expect(reader.status).toBe('completed');
    expect(reader.timeline.find((e: { type: string }) => e.type === 'step.condition').data).toEqual({
      opened: 'first',
      result: true,
      next: 'thanks',
    });
    const [thanks] = await capturedTo('reader@example.com', 2);
    expect(thanks!.subject).toBe('Thanks for reading, Ann');

    const skipper = await runOnce(id, await runFor(id, 'skipper@example.com'), ended);
    expect(skipper.status).toBe('completed');
    expect(skipper.timeline.map((e: { type: string }) => e.type)).toEqual([
      'run.started',
      'step.sent',
      'step.waiting',
      'step.condition',
      'run.completed',
    ]);
    expect(skipper.timeline[3].data).toEqual({ opened: 'first', result: false, next: 'end' });
  });

  it('starts runs from a custom event, with its data, once per event, and refuses an email that is no contact', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'custom_event', name: 'plan.upgraded' },
      steps: [{ id: 'congrats', type: 'send', template: 'welcome', from: FROM, subject: 'Now on {{plan}}' }],
    });
    await contact(aud, 'upgrader@example.com', { plan: 'free' });
    const body = { name: 'plan.upgraded', email: 'Upgrader@Example.com', data: { plan: 'pro' }, idempotency_key: 'u-1' };
    const posted = await gp.request('POST', '/v1/events', { key: live, body });
    expect(posted.status).toBe(202);
    expect(posted.body.id).toMatch(/^evt_/);
    expect(posted.body.runs).toHaveLength(1);
    // The same event again starts nothing.
    const again = await gp.request('POST', '/v1/events', { key: live, body });
    expect(again.body).toEqual({ id: posted.body.id, runs: [] });

    const [mail] = await capturedTo('upgrader@example.com');
    expect(mail!.subject).toBe('Now on pro');
    const run = await runOnce(id, posted.body.runs[0], ended);
    expect(run).toMatchObject({ status: 'completed', trigger: { type: 'custom_event', name: 'plan.upgraded' } });

    const stranger = await gp.request('POST', '/v1/events', {
      key: live,
      body: { name: 'plan.upgraded', email: 'nobody@example.com' },
    });
    expect([stranger.status, stranger.body.error.code]).toEqual([404, 'contact_not_found']);
    const unheard = await gp.request('POST', '/v1/events', {
      key: live,
      body: { name: 'never.used', email: 'upgrader@example.com' },
    });
    expect([unheard.status, unheard.body.error.code]).toEqual([404, 'contact_not_found']);
    expect((await gp.request('GET', `/v1/automations/${id}/runs`, { key: live })).body.data).toHaveLength(1);

    // Disabled, it starts no run: the contact is in the audience of no enabled automation of the event.
    await gp.request('PATCH', `/v1/automations/${id}`, { key: live, body: { enabled: false } });
    const off = await gp.request('POST', '/v1/events', { key: live, body: { ...body, idempotency_key: 'u-2' } });
    expect([off.status, off.body.error.code]).toEqual([404, 'contact_not_found']);
  });

  it('starts a run from a lifecycle event of a message to a contact', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'email_event', event: 'email.sent' },
      steps: [{ id: 'follow', type: 'send', template: 'welcome', from: FROM, subject: 'Following up' }],
    });
    await contact(aud, 'buyer@example.com');
    const sent = await gp.request('POST', '/v1/emails', {
      key: sandbox,
      body: { from: FROM, to: 'buyer@example.com', subject: 'Your order', html: '<p>Thanks</p>' },
    });
    expect(sent.status).toBe(202);
    const mails = await capturedTo('buyer@example.com', 2);
    expect(mails.map((m) => m.subject).sort()).toEqual(['Following up', 'Your order']);
    const run = await runOnce(id, await runFor(id, 'buyer@example.com'), ended);
    expect(run).toMatchObject({ status: 'completed', trigger: { type: 'email_event', name: 'email.sent' } });
    expect(run.data).toMatchObject({ message_id: sent.body.id, to: 'buyer@example.com' });
  });

  it('ends a run at its next step once the contact unsubscribed, with the reason on its timeline', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'contact_added' },
      steps: [
        { id: 'first', type: 'send', template: 'welcome', from: FROM },
        { id: 'pause', type: 'wait', duration: ACT_WITHIN },
        { id: 'second', type: 'send', template: 'welcome', from: FROM, subject: 'Again' },
      ],
    });
    await contact(aud, 'leaver@example.com');
    const [first] = await capturedTo('leaver@example.com');
    const unsubscribe = /^<([^>]*)>/.exec(first!.headers['List-Unsubscribe']!)![1]!;
    const done = await fetch(`${gp.url}${new URL(unsubscribe).pathname}`, {
      method: 'POST',
      body: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(done.status).toBe(200);

    const run = await runOnce(id, await runFor(id, 'leaver@example.com'), ended);
    expect(run).toMatchObject({ status: 'stopped', reason: 'recipient_suppressed' });
    expect(run.timeline.at(-1)).toMatchObject({
      type: 'run.stopped',
      data: { reason: 'recipient_suppressed', detail: 'unsubscribe' },
    });
    expect(run.timeline.filter((e: { type: string }) => e.type === 'step.sent')).toHaveLength(1);
  });

  it('stops the runs of a disabled automation at their next step', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'contact_added' },
      steps: [
        { id: 'pause', type: 'wait', duration: ACT_WITHIN },
        { id: 'hello', type: 'send', template: 'welcome', from: FROM },
      ],
    });
    await contact(aud, 'paused@example.com');
    const runId = await runFor(id, 'paused@example.com');
    await runOnce(id, runId, (r) => r.status === 'waiting');
    const off = await gp.request('PATCH', `/v1/automations/${id}`, { key: live, body: { enabled: false, name: 'Off' } });
    expect(off.body).toMatchObject({ enabled: false, name: 'Off' });

    const run = await runOnce(id, runId, ended);
    expect(run).toMatchObject({ status: 'stopped', reason: 'automation_disabled' });
    expect(run.timeline.map((e: { type: string }) => e.type)).toEqual(['run.started', 'step.waiting', 'run.stopped']);
  });

  it('fires a wait that was under way when Gatepost restarted, and sends', async () => {
    const aud = await audience();
    const id = await automation({
      audience_id: aud,
      trigger: { type: 'contact_added' },
      steps: [
        { id: 'pause', type: 'wait', duration: 5 },
        { id: 'hello', type: 'send', template: 'welcome', from: FROM, subject: 'After the restart' },
      ],
    });
    await contact(aud, 'patient@example.com');
    const runId = await runFor(id, 'patient@example.com');
    await runOnce(id, runId, (r) => r.status === 'waiting');
    await gp.restart();

    // On Dapr, a wait that came due while the actor host was down is tried again until it is back.
    const [mail] = await capturedTo('patient@example.com', 1, 2 * WAIT_MS);
    expect(mail!.subject).toBe('After the restart');
    const run = await runOnce(id, runId, ended);
    expect(run.status).toBe('completed');
    expect(run.timeline.map((e: { type: string }) => e.type)).toEqual([
      'run.started',
      'step.waiting',
      'step.sent',
      'run.completed',
    ]);
  });
});

describe('automation definitions', () => {
  const send = { id: 's', type: 'send', template: 'welcome', from: FROM };

  it.each([
    ['an unknown template', [{ ...send, template: 'missing' }], 'template_not_found', 'steps[0].template'],
    [
      'a cycle',
      [send, { id: 'w', type: 'wait', duration: 60 }, { id: 'c', type: 'if', opened: 's', else: 'w' }],
      'automation_cycle',
      'steps[2]',
    ],
    ['a wait too long', [{ id: 'w', type: 'wait', duration: 'P31D' }, send], 'automation_wait_out_of_range', 'steps[0].duration'],
    ['a wait too short', [{ id: 'w', type: 'wait', duration: 0 }, send], 'automation_wait_out_of_range', 'steps[0].duration'],
    ['an unknown step', [send, { id: 'c', type: 'if', clicked: 'nope' }], 'automation_step_unknown', 'steps[1].clicked'],
  ])('refuses %s with a coded 422, creating nothing', async (_what, steps, code, field) => {
    const aud = await audience();
    const before = (await gp.request('GET', '/v1/automations', { key: live })).body.data.length;
    const res = await gp.request('POST', '/v1/automations', {
      key: live,
      body: { name: 'Bad', audience_id: aud, trigger: { type: 'contact_added' }, steps },
    });
    expect([res.status, res.body.error.code, res.body.error.details[0].field]).toEqual([422, code, field]);
    expect((await gp.request('GET', '/v1/automations', { key: live })).body.data).toHaveLength(before);
  });

  it("refuses another tenant's audience, a sandbox key, and reads no other tenant's automation", async () => {
    const other = await gp.tenant();
    const theirs = await gp.request('POST', '/v1/audiences', { key: other.live, body: { name: 'Theirs' } });
    const res = await gp.request('POST', '/v1/automations', {
      key: live,
      body: { name: 'X', audience_id: theirs.body.id, trigger: { type: 'contact_added' }, steps: [send] },
    });
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    const bySandbox = await gp.request('GET', '/v1/automations', { key: sandbox });
    expect([bySandbox.status, bySandbox.body.error.code]).toEqual([403, 'insufficient_scope']);

    const mine = await automation({ audience_id: await audience(), trigger: { type: 'contact_added' }, steps: [send] });
    expect((await gp.request('GET', `/v1/automations/${mine}`, { key: other.live })).status).toBe(404);
    expect((await gp.request('DELETE', `/v1/automations/${mine}`, { key: other.live })).status).toBe(404);
    expect((await gp.request('DELETE', `/v1/automations/${mine}`, { key: live })).status).toBe(204);
    expect((await gp.request('GET', `/v1/automations/${mine}`, { key: live })).status).toBe(404);
  });
});
