// A reminder that comes due while the actor host's app is down, its daprd up: daprd triggers it,
// the app does not answer, and the scheduler tries again by the reminder's failure policy. Without
// one (daprd's HTTP reminder API cannot set it) that was three tries a second apart, then the
// reminder was dropped: a scheduled send whose host was down at its time was never sent. And a
// live send's admission, which registers no reminder (issue 27), while the scheduler is down.
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { daprClusterWithRelay } from '../harness/cluster.harness.ts';

const suite = daprClusterWithRelay('reminders');

/** How long past its time the scheduled send waits for its host: far past three tries a second apart. */
const DOWN_PAST_DUE_MS = 20_000;

describe('reminders due while the actor host app is down', () => {
  it('a scheduled send is sent once the app is back, and once only', async () => {
    const t = await suite.client.tenant();
    const sendAt = Date.now() + 3_000;
    const res = await suite.client.request('POST', '/v1/emails', {
      key: t.live,
      body: { to: 'down@example.com', subject: 'down', html: '<p>h</p>', send_at: new Date(sendAt).toISOString() },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // The app dies; its sidecar, placement and the scheduler stay up and trigger the reminder.
    await suite.cluster.kill('actors');
    expect(suite.cluster.running('actors-daprd')).toBe(true);
    const backAt = sendAt + DOWN_PAST_DUE_MS;
    while (Date.now() < backAt) await new Promise((r) => setTimeout(r, backAt - Date.now()));
    await suite.cluster.restart('actors');

    await eventually(() => suite.relay.received.find((r) => r.to.includes('down@example.com')), 60_000);
    const get = async () => (await suite.client.request('GET', `/v1/messages/${res.body.id}`, { key: t.live })).body;
    const timeline = await eventually(async () => ((await get()).status === 'sent' ? get() : undefined));
    // Queued by the restarted app: nothing sent it before.
    const queued = timeline.events.find((e: { type: string }) => e.type === 'message.queued');
    expect(Date.parse(queued.created_at)).toBeGreaterThanOrEqual(backAt);
    expect(suite.relay.received.filter((r) => r.to.includes('down@example.com'))).toHaveLength(1);
  }, 180_000);

  it('a live send is accepted and delivered while the scheduler is down: its admission registers no reminder', async () => {
    const t = await suite.client.tenant();
    // The tenant's first send, so that its actors are placed and warm before the scheduler goes.
    const warm = await suite.client.request('POST', '/v1/emails', {
      key: t.live,
      body: { to: 'warm@example.com', subject: 'warm', html: '<p>h</p>' },
    });
    expect(warm.status).toBe(202);
    await eventually(() => suite.relay.received.find((r) => r.to.includes('warm@example.com')), 60_000);

    await suite.cluster.kill('scheduler');
    try {
      // Before, the admission waited for its watchdog's ledger page, which only the scheduler takes.
      const res = await suite.client.request('POST', '/v1/emails', {
        key: t.live,
        body: { to: 'no-scheduler@example.com', subject: 'no scheduler', html: '<p>h</p>' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      // Its hand-over is held while its message waits in the fair queue, which gives it out at once.
      await eventually(() => suite.relay.received.find((r) => r.to.includes('no-scheduler@example.com')), 60_000);
    } finally {
      await suite.cluster.restart('scheduler');
    }
  }, 180_000);
});
