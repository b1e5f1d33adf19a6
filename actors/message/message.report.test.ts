// MessageActor.recordReport: what a bounce or complaint that came back after the message was sent
// does to its timeline, its status, its recipient's suppression and the lifecycle event stream.
import { afterEach, describe, expect, it } from 'vitest';
import { actor, type ActorRuntime } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { recipientActor, recipientActorId } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { messageActor } from './message.actor.ts';
import type { LateReport } from './message.state.ts';
import { EMAIL_EVENTS, timelineOf, type EmailEvent } from '../../events/email.event.ts';
import { admitArgs, attemptOutcome } from './message.testkit.ts';

let h: Harness;
afterEach(() => h.cleanup());

const hardBounce: LateReport = {
  tenant_id: 'ten_1',
  report_id: 'rpt_1',
  recipient: 'b@example.com',
  kind: 'bounce',
  source: 'dsn',
  action: 'failed',
  status: '5.1.1',
  smtp_code: 550,
  diagnostic: '550 5.1.1 <b@example.com>: Recipient address rejected: User unknown',
  remote_mta: 'mx.example.com',
};

const complaint: LateReport = {
  tenant_id: 'ten_1',
  report_id: 'rpt_2',
  recipient: 'b@example.com',
  kind: 'complaint',
  feedback_type: 'abuse',
  user_agent: 'Yahoo!-Mail-Feedback/2.0',
};

/** A runtime whose lifecycle events land in `published`, and a message `id` of ten_1 sent to b@example.com. */
async function sentMessage(id: string, over: Parameters<typeof admitArgs>[0] = {}) {
  const published: EmailEvent[] = [];
  h = harness();
  const runtime = await h.start({
    actors: [messageActor, recipientActor, tenantActor],
    subscribers: { [EMAIL_EVENTS]: async ({ data }) => void published.push(data as EmailEvent) },
  });
  const message = actor(runtime, messageActor, id);
  await message.admit(admitArgs(over));
  await message.recordAttempt(
    attemptOutcome({
      attempt: 1,
      result: 'sent',
      smtp_code: 250,
      response: '250 ok',
      domain: 'example.com',
      recipients: ['b@example.com'],
    }),
  );
  await eventually(() => published.some((p) => p.event.type === 'email.sent'));
  return { runtime, message, published };
}

const suppressionOf = (runtime: ActorRuntime, address: string) =>
  actor(runtime, recipientActor, recipientActorId('ten_1', address)).check(undefined);

describe('MessageActor.recordReport', () => {
  it('records a hard bounce that comes after email.sent: the status follows, the recipient is suppressed, the event is published', async () => {
    const { runtime, message, published } = await sentMessage('msg_late');
    await expect(message.recordReport(hardBounce)).resolves.toEqual({ result: 'recorded', recipient: 'b@example.com' });

    const { record } = await message.get(undefined);
    expect(record.status).toBe('bounced');
    const bounced = timelineOf(record).filter((e) => e.type === 'email.bounced');
    expect(bounced).toEqual([
      {
        id: expect.stringMatching(/^evt_/),
        type: 'email.bounced',
        created_at: expect.any(String),
        data: {
          message_id: 'msg_late',
          to: 'b@example.com',
          attempt: null,
          smtp_code: 550,
          enhanced_code: '5.1.1',
          response: hardBounce.kind === 'bounce' ? hardBounce.diagnostic : '',
          mx: 'mx.example.com',
          ip: null,
          tls: null,
          connected_at: null,
          accepted_at: null,
          stage: null,
          domain: 'example.com',
          recipients: ['b@example.com'],
          bounce_type: 'hard',
          source: 'dsn',
          action: 'failed',
          report_id: 'rpt_1',
        },
      },
    ]);
    await expect(suppressionOf(runtime, 'b@example.com')).resolves.toMatchObject({ reason: 'hard_bounce' });
    await eventually(() => published.some((p) => p.event.type === 'email.bounced'));
    expect(published.find((p) => p.event.type === 'email.bounced')).toEqual({ tenant_id: 'ten_1', event: bounced[0] });
  });

  it('records the same report twice once, and publishes it once', async () => {
    const { message, published } = await sentMessage('msg_dup');
    await message.recordReport(hardBounce);
    // The same bounce again (a retried hand-over), then another report saying the same thing.
    await expect(message.recordReport(hardBounce)).resolves.toEqual({ result: 'repeat', recipient: 'b@example.com' });
    await expect(message.recordReport({ ...hardBounce, report_id: 'rpt_9' })).resolves.toMatchObject({ result: 'repeat' });
    await message.recordReport(complaint);
    await expect(message.recordReport({ ...complaint, report_id: 'rpt_10' })).resolves.toMatchObject({ result: 'repeat' });
    const { record } = await message.get(undefined);
    expect(record.events.map((e) => e.type).filter((t) => t === 'email.bounced' || t === 'email.complained')).toEqual([
      'email.bounced',
      'email.complained',
    ]);
    await eventually(() => published.some((p) => p.event.type === 'email.complained'));
    expect(published.filter((p) => p.event.type === 'email.bounced')).toHaveLength(1);
  });

  it('records a complaint: email.complained published, the recipient suppressed for it, the status still sent', async () => {
    const { runtime, message, published } = await sentMessage('msg_cmp');
    await expect(message.recordReport(complaint)).resolves.toEqual({ result: 'recorded', recipient: 'b@example.com' });
    const { record } = await message.get(undefined);
    expect(record.status).toBe('sent');
    expect(record.events.find((e) => e.type === 'email.complained')?.data).toEqual({
      to: 'b@example.com',
      recipients: ['b@example.com'],
      feedback_type: 'abuse',
      user_agent: 'Yahoo!-Mail-Feedback/2.0',
      report_id: 'rpt_2',
    });
    await expect(suppressionOf(runtime, 'b@example.com')).resolves.toMatchObject({ reason: 'complaint' });
    await eventually(() => published.some((p) => p.event.type === 'email.complained' && p.tenant_id === 'ten_1'));
  });

  it('records a delay as a soft bounce and a policy refusal as a block: neither suppresses, only the failure bounces the message', async () => {
    const { runtime, message } = await sentMessage('msg_soft');
    const delay: LateReport = { ...hardBounce, action: 'delayed', status: '4.4.1', smtp_code: null, diagnostic: 'timed out' };
    await message.recordReport(delay);
    expect((await message.get(undefined)).record.status).toBe('sent');
    await message.recordReport({ ...hardBounce, status: '5.7.1', diagnostic: '550 5.7.1 blocked by policy' });
    const { record } = await message.get(undefined);
    expect(record.status).toBe('bounced');
    expect(record.events.filter((e) => e.type === 'email.bounced').map((e) => e.data.bounce_type)).toEqual(['soft', 'block']);
    await expect(suppressionOf(runtime, 'b@example.com')).resolves.toBeNull();
  });

  it("refuses a report for another tenant's message, a sandbox message, or a recipient the message did not go to, and records nothing", async () => {
    const { runtime, message } = await sentMessage('msg_iso');
    const before = (await message.get(undefined)).record.events;
    await expect(message.recordReport({ ...hardBounce, tenant_id: 'ten_other' })).resolves.toEqual({
      result: 'refused',
      reason: 'no such message for this tenant',
    });
    await expect(message.recordReport({ ...hardBounce, recipient: 'stranger@example.org' })).resolves.toMatchObject({
      result: 'refused',
    });
    await expect(actor(runtime, messageActor, 'msg_none').recordReport(hardBounce)).resolves.toMatchObject({ result: 'refused' });
    expect((await message.get(undefined)).record.events).toEqual(before);
    await expect(suppressionOf(runtime, 'b@example.com')).resolves.toBeNull();
    await expect(suppressionOf(runtime, 'stranger@example.org')).resolves.toBeNull();

    const sandbox = actor(runtime, messageActor, 'msg_sbx');
    await sandbox.admit(admitArgs({ sandbox: true }));
    await expect(sandbox.recordReport(hardBounce)).resolves.toMatchObject({ result: 'refused' });
  });

  it('takes a report that names no recipient as about the message’s only one', async () => {
    const { message } = await sentMessage('msg_anon');
    await expect(message.recordReport({ ...complaint, recipient: null })).resolves.toEqual({
      result: 'recorded',
      recipient: 'b@example.com',
    });
  });
});
