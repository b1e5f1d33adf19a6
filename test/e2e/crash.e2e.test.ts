// The crash test: under load, Gatepost is killed with SIGKILL and restarted on the same data.
// Every 202-acknowledged message must exist and reach the relay; clients retrying the requests
// the crash cut off, with the same idempotency keys, must create no duplicates.
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const CLIENTS = 16;

describe('SIGKILL under load', () => {
  it('loses no acknowledged message; sends twice only what the kill cut off mid-delivery', async () => {
    const t = await suite.gp.tenant();
    const acknowledged = new Map<string, string>(); // idempotency key → message id
    const cutOff: string[] = []; // keys whose request got no answer

    const body = (key: string) => ({
      to: `${key}@example.com`,
      subject: `Crash ${key}`,
      html: `<p>${key}</p>`,
      idempotency_key: key,
    });
    const send = (key: string) => suite.gp.request('POST', '/v1/emails', { key: t.live, body: body(key) });

    let killed = false;
    let killing: Promise<void> | null = null;
    const client = async (c: number) => {
      for (let i = 0; !killed; i++) {
        const key = `c${c}-${i}`;
        const pending = send(key);
        // Kill with this request on its way (so at least one is cut off), once a good number of
        // sends are acknowledged and deliveries are flowing.
        if (!killed && acknowledged.size >= 400 && suite.relay.received.length > 0) {
          killed = true;
          killing = suite.gp.kill();
        }
        try {
          const res = await pending;
          expect(res.status).toBe(202);
          acknowledged.set(key, res.body.id);
        } catch {
          cutOff.push(key);
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    expect(killing).not.toBeNull();
    await killing;
    expect(cutOff.length).toBeGreaterThan(0);

    await suite.gp.start();
    // The clients retry what the crash cut off, with the same keys.
    for (const key of cutOff) {
      const res = await send(key);
      expect(res.status).toBe(202);
      acknowledged.set(key, res.body.id);
    }

    // Every acknowledged message exists and reaches the relay.
    const wanted = new Map([...acknowledged.values()].map((id) => [`<${id}@sender.example>`, id]));
    await eventually(() => [...wanted.keys()].every((mid) => suite.relay.byMessageId().has(mid)), 60_000);
    for (const id of acknowledged.values()) {
      expect((await suite.gp.request('GET', `/v1/messages/${id}`, { key: t.live })).status).toBe(200);
    }

    // Exactly once. A delivery the kill cut short between the relay's 250 and our record of it
    // is retried (at-least-once, RFC 1047); the timeline says so. Only those may arrive twice.
    const counts = suite.relay.byMessageId();
    const twice = [...counts].filter(([, n]) => n > 1);
    for (const [mid, n] of twice) {
      expect(n).toBe(2);
      const id = wanted.get(mid)!;
      const timeline = (await suite.gp.request('GET', `/v1/messages/${id}`, { key: t.live })).body;
      expect(JSON.stringify(timeline.events)).toContain('cut short by a restart');
    }
    // No message the clients did not ask for, and none received that was not acknowledged.
    const sentForThisTenant = [...counts.keys()].filter((mid) =>
      suite.relay.received.some((r) => r.messageId === mid && r.to[0]!.startsWith('c')),
    );
    expect(new Set(sentForThisTenant)).toEqual(new Set(wanted.keys()));
    console.log(
      `crash test: ${acknowledged.size} acknowledged (${cutOff.length} retried after the kill), ` +
        `${suite.relay.received.length} received, ${twice.length} delivered twice after an interrupted attempt`,
    );
  });
});
