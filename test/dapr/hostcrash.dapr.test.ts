// The actor host dies under load while the ingress stays up: its app and its daprd are killed
// (SIGKILL) with sends under way, and started again. Every send answered 202 reaches the relay;
// a send that got no 202 is retried by its client with the same idempotency key; only a
// delivery the kill cut short may arrive twice, and its timeline says so. (The e2e crash test
// kills the ingress too; here the ingress keeps taking sends through the outage.)
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { daprClusterWithRelay, relayMessageIds, sendKeyed } from '../harness/cluster.harness.ts';

const suite = daprClusterWithRelay('host-crash');

const CLIENTS = 12;

describe('the actor host killed under load, the ingress up', () => {
  it('loses no acknowledged message, and sends twice only what the kill cut short', async () => {
    const t = await suite.client.tenant();
    const acknowledged = new Map<string, string>(); // idempotency key → message id
    const unanswered: string[] = []; // keys that got no 202 (an error, or a 5xx)
    const send = (key: string) => sendKeyed(suite.client, t.live, key);

    let crash: Promise<void> | null = null;
    let back = false;
    let afterBack = 0;
    const sender = async (c: number) => {
      for (let i = 0; !back || afterBack < 40; i++) {
        const key = `h${c}-${i}`;
        const pending = send(key);
        if (!crash && acknowledged.size >= 200 && suite.relay.received.length > 0) {
          // The host and its sidecar die together, with this send (and others) under way.
          crash = (async () => {
            await Promise.all([suite.cluster.kill('actors'), suite.cluster.kill('actors-daprd')]);
            await suite.cluster.restart('actors-daprd');
            await suite.cluster.restart('actors');
            back = true;
          })();
        }
        const res = await pending.catch(() => null);
        if (res?.status === 202) {
          acknowledged.set(key, res.body.id);
          if (back) afterBack++;
        } else {
          unanswered.push(key);
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => sender(c)));
    expect(crash).not.toBeNull();
    await crash;

    // The clients retry what got no 202, with the same keys.
    for (const key of unanswered) {
      const res = await send(key);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      acknowledged.set(key, res.body.id);
    }

    const wanted = relayMessageIds(acknowledged);
    await eventually(() => [...wanted.keys()].every((mid) => suite.relay.byMessageId().has(mid)), 120_000);
    for (const id of acknowledged.values()) {
      expect((await suite.client.request('GET', `/v1/messages/${id}`, { key: t.live })).status).toBe(200);
    }
    const counts = suite.relay.byMessageId();
    const twice = [...counts].filter(([, n]) => n > 1);
    for (const [mid, n] of twice) {
      expect(n).toBe(2);
      const timeline = (await suite.client.request('GET', `/v1/messages/${wanted.get(mid)}`, { key: t.live })).body;
      expect(JSON.stringify(timeline.events)).toContain('cut short by a restart');
    }
    expect(new Set(suite.relay.received.map((r) => r.messageId))).toEqual(new Set(wanted.keys()));
    console.log(
      `host crash: ${acknowledged.size} acknowledged (${unanswered.length} retried after no 202), ` +
        `${suite.relay.received.length} received, ${twice.length} delivered twice after an interrupted attempt`,
    );
  }, 300_000);
});
