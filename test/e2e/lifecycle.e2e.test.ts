// Starting, first-start keys, health, draining on SIGTERM, and schedules that outlive restarts.
import { describe, expect, it } from 'vitest';
import { eventually, startGatepost, tempDir } from '../harness/gatepost.harness.ts';
import { startRelay } from '../harness/relay.harness.ts';

describe('first start', () => {
  it('creates a default tenant, prints a live and a sandbox key that work, and answers /healthz', async () => {
    const gp = await startGatepost();
    try {
      const live = /live key:\s+(gp_live_\S+)/.exec(gp.output)?.[1];
      const sandbox = /sandbox key:\s+(gp_sandbox_\S+)/.exec(gp.output)?.[1];
      expect(live).toBeDefined();
      expect(sandbox).toBeDefined();
      expect((await gp.request('GET', '/healthz')).status).toBe(200);
      const res = await gp.request('POST', '/v1/emails', {
        key: sandbox,
        body: { to: 'first@example.com', subject: 'Hi', html: '<p>Hi</p>' },
      });
      expect(res.status).toBe(202);
      await gp.restart();
      expect(gp.output).not.toMatch(/live key:/);
      expect((await gp.request('GET', `/v1/messages/${res.body.id}`, { key: sandbox })).status).toBe(200);
    } finally {
      await gp.dispose();
    }
  });
});

describe('SIGTERM', () => {
  it('answers the requests under way, then exits 0, and everything answered 202 is kept', async () => {
    const gp = await startGatepost();
    const t = await gp.tenant();
    const accepted: string[] = [];
    let stopped: Promise<number | null> | null = null;
    // Eight clients send one request after another until the server stops answering.
    const client = async (c: number) => {
      for (let i = 0; ; i++) {
        try {
          const res = await gp.request('POST', '/v1/emails', {
            key: t.sandbox,
            body: { to: `drain${c}-${i}@example.com`, subject: 's', html: '<p>h</p>' },
          });
          if (res.status !== 202) return;
          accepted.push(res.body.id);
        } catch {
          return;
        }
        if (accepted.length === 40) stopped = gp.stop();
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
    expect(stopped).not.toBeNull();
    expect(await stopped).toBe(0);
    // The drain ran to its end (the process did not merely run out of work to wait for).
    expect(gp.output).toContain('Stopped: every request under way answered, every store closed.');
    expect(accepted.length).toBeGreaterThanOrEqual(40);
    await gp.start();
    try {
      for (const id of accepted) expect((await gp.request('GET', `/v1/messages/${id}`, { key: t.sandbox })).status).toBe(200);
    } finally {
      await gp.dispose();
    }
  });
});

describe('scheduled sends across restarts', () => {
  it('fire on time after a restart before they are due', async () => {
    const relay = await startRelay();
    const gp = await startGatepost({ relayUrl: relay.url });
    try {
      const t = await gp.tenant();
      const sendAt = new Date(Date.now() + 4000).toISOString();
      const res = await gp.request('POST', '/v1/emails', {
        key: t.live,
        body: { to: 'restart@example.com', subject: 's', html: '<p>h</p>', send_at: sendAt },
      });
      await gp.restart();
      await eventually(() => relay.received.find((r) => r.to.includes('restart@example.com')));
      const timeline = (await gp.request('GET', `/v1/messages/${res.body.id}`, { key: t.live })).body;
      const queued = timeline.events.find((e: { type: string }) => e.type === 'message.queued');
      expect(Date.parse(queued.created_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
      // How late it fires is a benchmark figure (bench:scheduled), never a test threshold.
    } finally {
      await gp.dispose();
      await relay.close();
    }
  });

  it('fire at once when Gatepost was down (killed) at their time', async () => {
    const relay = await startRelay();
    const dataDir = tempDir();
    const gp = await startGatepost({ relayUrl: relay.url, dataDir });
    try {
      const t = await gp.tenant();
      const sendAt = Date.now() + 1500;
      const res = await gp.request('POST', '/v1/emails', {
        key: t.live,
        body: { to: 'missed@example.com', subject: 's', html: '<p>h</p>', send_at: new Date(sendAt).toISOString() },
      });
      await gp.kill();
      // Down at its time: started again only once that time has passed.
      while (Date.now() <= sendAt) await new Promise((r) => setTimeout(r, sendAt - Date.now() + 1));
      const restartedAt = Date.now();
      await gp.start();
      await eventually(() => relay.received.find((r) => r.to.includes('missed@example.com')));
      // Queued by the restarted process: nothing sent it before the kill.
      const timeline = (await gp.request('GET', `/v1/messages/${res.body.id}`, { key: t.live })).body;
      const queued = timeline.events.find((e: { type: string }) => e.type === 'message.queued');
      expect(Date.parse(queued.created_at)).toBeGreaterThanOrEqual(restartedAt);
    } finally {
      await gp.dispose();
      await relay.close();
    }
  });
});
