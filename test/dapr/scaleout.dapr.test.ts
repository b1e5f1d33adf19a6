// Scale-out on Dapr: two actor-host replicas share the actors through placement; killing one
// (app and sidecar, SIGKILL) moves its actors to the other, and no acknowledged message is lost
// or sent twice. Runs with `npm run test:dapr` (real daprd, placement, scheduler, Redis, PostgreSQL).
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { daprClusterWithRelay, relayMessageIds, sendKeyed } from '../harness/cluster.harness.ts';

const suite = daprClusterWithRelay('scale-out', { actorHosts: 2 });

/** Active actors of one type on one host, as its sidecar reports them. */
async function activeOn(host: string, type: string): Promise<number> {
  const meta = (await (await fetch(`http://127.0.0.1:${suite.cluster.ports[`${host}Http`]}/v1.0/metadata`)).json()) as {
    actorRuntime?: { activeActors?: { type: string; count: number }[] };
  };
  return meta.actorRuntime?.activeActors?.find((a) => a.type === type)?.count ?? 0;
}

describe('two actor hosts', () => {
  it('share the actors, and when one dies the other takes its actors over with nothing lost or doubled', async () => {
    const t = await suite.client.tenant();
    const acknowledged = new Map<string, string>();
    const sendAll = async (keys: string[]) => {
      for (let i = 0; i < keys.length; i += 8) {
        await Promise.all(
          keys.slice(i, i + 8).map(async (key) => {
            const res = await sendKeyed(suite.client, t.live, key);
            expect(res.status, JSON.stringify(res.body)).toBe(202);
            acknowledged.set(key, res.body.id);
          }),
        );
      }
    };

    await sendAll(Array.from({ length: 80 }, (_, i) => `before-${i}`));
    // Placement spread the message actors over both hosts.
    expect(await activeOn('actors', 'MessageActor')).toBeGreaterThan(0);
    expect(await activeOn('actors2', 'MessageActor')).toBeGreaterThan(0);

    await suite.cluster.kill('actors2');
    await suite.cluster.kill('actors2-daprd');
    await sendAll(Array.from({ length: 80 }, (_, i) => `after-${i}`));

    const wanted = relayMessageIds(acknowledged);
    await eventually(() => [...wanted.keys()].every((mid) => suite.relay.byMessageId().has(mid)), 120_000);
    for (const id of acknowledged.values()) {
      expect((await suite.client.request('GET', `/v1/messages/${id}`, { key: t.live })).status).toBe(200);
    }
    // Exactly once, but for a delivery the kill cut off after the relay's 250 (RFC 1047), which
    // its timeline says.
    for (const [mid, n] of suite.relay.byMessageId()) {
      if (n === 1) continue;
      expect(n).toBe(2);
      const timeline = (await suite.client.request('GET', `/v1/messages/${wanted.get(mid)}`, { key: t.live })).body;
      expect(JSON.stringify(timeline.events)).toContain('cut short by a restart');
    }
    expect(new Set(suite.relay.received.map((r) => r.messageId))).toEqual(new Set(wanted.keys()));
    // The survivor now hosts what it takes to answer for every message.
    expect(await activeOn('actors', 'MessageActor')).toBeGreaterThan(0);
  }, 300_000);

  it('take a host that joins under load, and lose nothing when it is killed under load', async () => {
    const t = await suite.client.tenant();
    const acknowledged = new Map<string, string>(); // idempotency key → message id
    const unanswered: string[] = []; // keys that got no 202: their clients retry them
    const send = (key: string) => sendKeyed(suite.client, t.live, key);
    let phase: 'before' | 'joined' | 'killed' | 'done' = 'before';
    const sender = async (c: number) => {
      for (let i = 0; phase !== 'done'; i++) {
        const key = `l${c}-${i}`;
        const res = await send(key).catch(() => null);
        if (res?.status === 202) acknowledged.set(key, res.body.id);
        else unanswered.push(key);
      }
    };
    const senders = Promise.all(Array.from({ length: 8 }, (_, c) => sender(c)));
    const acks = (n: number) => eventually(() => acknowledged.size >= n, 120_000);

    await acks(40);
    // actors2 (killed above) starts again and joins: placement moves some actors to it.
    await suite.cluster.restart('actors2-daprd');
    await suite.cluster.restart('actors2');
    phase = 'joined';
    await eventually(async () => (await activeOn('actors2', 'MessageActor')) > 0, 120_000);
    await acks(acknowledged.size + 40);
    // Killed with sends under way: app and sidecar, SIGKILL.
    await Promise.all([suite.cluster.kill('actors2'), suite.cluster.kill('actors2-daprd')]);
    phase = 'killed';
    await acks(acknowledged.size + 40);
    phase = 'done';
    await senders;

    for (const key of unanswered) {
      const res = await send(key);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      acknowledged.set(key, res.body.id);
    }
    const wanted = relayMessageIds(acknowledged);
    await eventually(() => [...wanted.keys()].every((mid) => suite.relay.byMessageId().has(mid)), 120_000);
    for (const [mid, id] of wanted) {
      const n = suite.relay.byMessageId().get(mid)!;
      if (n === 1) continue;
      // Each of the two disruptions (the join's drain, then the kill) may cut one attempt of a
      // delivery short: a send, and one more after each. Every such delivery is marked.
      expect(n).toBeLessThanOrEqual(3);
      const timeline = (await suite.client.request('GET', `/v1/messages/${id}`, { key: t.live })).body;
      expect(JSON.stringify(timeline.events)).toContain('cut short by a restart');
    }
    // Nothing this tenant's clients did not ask for reached the suite.relay.
    const ours = suite.relay.received.filter((r) => r.to[0]!.startsWith('l')).map((r) => r.messageId);
    expect(new Set(ours)).toEqual(new Set(wanted.keys()));
    console.log(
      `join and kill under load: ${acknowledged.size} acknowledged (${unanswered.length} retried after no 202), ` +
        `${ours.length} received`,
    );
  }, 400_000);
});
