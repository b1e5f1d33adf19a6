// What one send costs in calls between processes on the Dapr topology, today (issue 27 item 1's
// first step): the calls each app makes to its daprd and the calls its daprd makes to it (actor
// calls served, reminders fired, publications received), read from each app's GET /metrics
// (gatepost_dapr_calls_total, the adapter's call log). A sandbox send and a live send (through an
// SMTP relay) are measured each to a recipient not seen before, after a first send of the same
// kind (whose calls are counted too: the same, but for reads of state its actors had not cached
// yet). The counts must be exactly today's: a change to the send path fails here, and then the
// tables below and docs/scaling.md ("Calls per send today") are updated with it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../harness/gatepost.harness.ts';
import { daprClusterWithRelay } from '../harness/cluster.harness.ts';

const suite = daprClusterWithRelay('calls');

/** `kind target` → calls. */
type Counts = Record<string, number>;
interface Both {
  ingress: Counts;
  actors: Counts;
}

/** The call log of one app, from its Prometheus text. */
async function scrape(url: string): Promise<Counts> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts: Counts = {};
  for (const m of text.matchAll(/^gatepost_dapr_calls_total\{kind="([^"]+)",target="([^"]+)"\} (\d+)$/gm)) {
    counts[`${m[1]} ${m[2]}`] = Number(m[3]);
  }
  return counts;
}

const minus = (after: Counts, before: Counts): Counts =>
  Object.fromEntries(
    Object.entries(after)
      .map(([k, n]) => [k, n - (before[k] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => a.localeCompare(b)),
  );

/**
 * One flush of the tenant's quota tally (actors/tenant/quota.tally.ts): once a second, it tells
 * the TenantActor the sends of a tenant without limits counted since the last, one turn that
 * saves the day's count (one state transaction). Each send's window below waits for its own,
 * so that it cannot fall across the next window's edge. The first in the actor host goes through
 * the sidecar and reads the day's count; daprd has placed the tenant here since, and the later
 * ones run on it here without the sidecar (runtime.dapr.ts, invokeHere). The figures given per
 * send leave it out: it is made once a second a tenant, whatever the rate.
 */
function withTally(counts: Counts, firstTally: boolean): Counts {
  const out = { ...counts };
  const add = (key: string, n: number) => (out[key] = (out[key] ?? 0) + n);
  if (firstTally) {
    add('actor_invocation TenantActor.tally', 1);
    add('actor_call_served TenantActor.tally', 1);
    add('state_read TenantActor', 1);
  } else add('actor_call_local TenantActor.tally', 1);
  add('state_transaction TenantActor', 1);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Calls per kind, all targets summed: the figures docs/scaling.md gives. */
function perKind(counts: Counts): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(counts)) out[k.split(' ')[0]!] = (out[k.split(' ')[0]!] ?? 0) + n;
  return out;
}

// What the ingress sends through its sidecar for one POST /v1/emails: the admit call.
const INGRESS = { 'actor_invocation MessageActor.admit': 1 };

/**
 * Calls on the actor host (app ↔ its daprd) for a sandbox send, up to the capture and its event:
 * the admission reads nothing (the message's id is new: ActorTurn.getNew; its transaction writes
 * only keys that are not there, a read before, until 12 calls) and publishes its hand-over before
 * its state transaction (ActorTurn.handOver: no outbox key, so no ledger page and no follow-up
 * transaction to clear it), and the subscriber of
 * the hand-over asks the message to capture itself, one turn that reads it, puts it in the inbox
 * and records the capture (two calls, `get` then `recordAttempt`, before). That turn reads nothing
 * from the state store: the actor's host keeps what the admission wrote, and knows it is all the
 * message has (the admission created its state: ActorTurn.handOver; its outcomes, a read more
 * until 13 calls, are absent), and publishes
 * its event straight after its commit (ActorTurn.publishAgainOnReplay: the
 * hand-over is delivered until the capture returns, and a capture found recorded publishes its
 * event again), so no outbox key, ledger page or follow-up transaction (three calls more before).
 * The event goes through no sidecar at all: the capture's caller, the hand-over's subscriber in
 * this same app, hands it to the app's own subscriber of `email.events` once the capture answers
 * (dapr/adapter/runtime.dapr.ts, carry; a publish and a delivery more before).
 * Every reminder is a page of the adapter's ledger (dapr/adapter/ledger.ts): here, the retention
 * reminder the capture sets. One page here, where a send comes alone; under load, the entries due
 * in one second of turns committing together share a page.
 */
const SANDBOX_ACTORS: Counts = {
  'actor_call_served MessageActor.admit': 1,
  'actor_call_local MessageActor.captureSandbox': 1,
  'publication_received message.ready': 1,
  'publish message.ready': 1,
  'reminder_registered GatepostLedger': 1,
  'state_transaction MessageActor': 2,
};

/**
 * The same for a live send, up to the relay's receipt and the reputation breaker's observation. Its
 * hand-over carries its place in the fair queue, so taking it is no call (the subscriber holds the
 * hand-over, a ledger entry, which publishes it again should the actor host die with it waiting):
 * begin and attempt, with the attempt's read of the message. The attempt and the breaker's
 * observation come from the fair queue, outside any turn, to actors daprd has placed on this host
 * (the delivery's begin, the tenant's earlier turns): run here without the sidecar, as the
 * capture is; the calls from inside turns (the attempt's to the message and the tenant) go
 * through it.
 */
const { 'actor_call_local MessageActor.captureSandbox': _, ...ADMITTED } = SANDBOX_ACTORS;
const LIVE_ACTORS: Counts = {
  ...ADMITTED,
  // The attempt reads the message, and records its outcome.
  'actor_call_served MessageActor.get': 1,
  'actor_call_served MessageActor.recordAttempt': 1,
  'actor_invocation MessageActor.get': 1,
  'actor_invocation MessageActor.recordAttempt': 1,
  // Its outcome's event goes through the turn's outbox key (its caller is no redelivered
  // publication): a ledger page, deleted once published by a follow-up transaction, and through
  // the broker to the app's subscriber.
  'publication_received email.events': 1,
  'publish email.events': 1,
  'state_transaction MessageActor': 3,
  // A live message waits in the fair queue, in memory: its subscriber holds its hand-over, whose
  // page it registers after the 202 and deletes once the attempt is over (the admission itself
  // registers nothing: reminders.dapr.test.ts sends with the scheduler down).
  'reminder_deleted GatepostLedger': 2,
  'reminder_registered GatepostLedger': 3,
  'actor_call_local DeliveryActor.attempt': 1,
  'actor_call_local TenantActor.observeReputation': 1,
  'actor_call_served DeliveryActor.begin': 1,
  'actor_call_served TenantActor.admitDelivery': 1,
  'actor_call_served TenantActor.chainReceipt': 1,
  'actor_invocation DeliveryActor.begin': 1,
  'actor_invocation TenantActor.admitDelivery': 1,
  'actor_invocation TenantActor.chainReceipt': 1,
  'state_read DeliveryActor': 1,
  'state_read TenantActor': 2,
  'state_transaction DeliveryActor': 2,
  'state_transaction TenantActor': 2,
};

/**
 * A first live send reads besides the tenant's state its actor has not cached yet: its breakers,
 * the list of their domains and the head of its receipt chain: from one to four more reads, as
 * earlier turns on the tenant read some (seen: 2 more in every run since the tally's turn comes
 * in its own send's window, 2026-11-28; 1 and 3 before, when a tally could fall in this one).
 */
const FIRST_LIVE_TENANT_READS: [number, number] = [
  LIVE_ACTORS['state_read TenantActor']! + 1,
  LIVE_ACTORS['state_read TenantActor']! + 4,
];

describe('calls between processes per send on the Dapr topology', () => {
  it('are, for a sandbox send and a live send, exactly what the send path makes today', async () => {
    const t = await suite.client.tenant();
    const log = readFileSync(join(suite.cluster.workDir, 'actors.log'), 'utf8');
    const actorsUrl = /metrics of this actor host: GET (\S+)\/metrics/.exec(log)![1]!;
    const scrapeBoth = async (): Promise<Both> => ({ ingress: await scrape(suite.cluster.url), actors: await scrape(actorsUrl) });

    const sandbox = async (to: string) => {
      const res = await suite.client.request('POST', '/v1/emails', {
        key: t.sandbox,
        body: { to, subject: 'hi', html: '<p>hi</p>' },
      });
      expect(res.status).toBe(202);
      const captured = async () =>
        (await suite.client.request('GET', `/v1/sandbox/messages/${res.body.id}`, { key: t.sandbox })).status === 200;
      await eventually(captured, 30_000);
    };
    const live = async (to: string) => {
      const res = await suite.client.request('POST', '/v1/emails', {
        key: t.live,
        body: { to, subject: 'hi', html: '<p>hi</p>' },
      });
      expect(res.status).toBe(202);
      await eventually(() => suite.relay.received.some((r) => r.messageId === `<${res.body.id}@sender.example>`), 30_000);
    };

    /** The first live send's reads of the tenant's state, counted as LIVE_ACTORS's when in FIRST_LIVE_TENANT_READS. */
    const firstLive = (counts: Counts): Counts => {
      const reads = counts['state_read TenantActor'] ?? 0;
      const [least, most] = FIRST_LIVE_TENANT_READS;
      return reads >= least && reads <= most
        ? { ...counts, 'state_read TenantActor': LIVE_ACTORS['state_read TenantActor']! }
        : counts;
    };
    /**
     * Sends, and waits until the calls since `before` are `expected` (the send's last calls, an
     * outbox cleared, a breaker observed or the tally told, come after the mail is captured or
     * received). Returns what was seen, which differs from `expected` only if it never got there.
     */
    const measure = async (send: () => Promise<void>, expected: Both, first: boolean): Promise<Both> => {
      const before = await scrapeBoth();
      await send();
      let seen: Both = { ingress: {}, actors: {} };
      const settled = async () => {
        const now = await scrapeBoth();
        const actors = minus(now.actors, before.actors);
        seen = { ingress: minus(now.ingress, before.ingress), actors: first ? firstLive(actors) : actors };
        return JSON.stringify(seen) === JSON.stringify(expected);
      };
      await eventually(settled, 30_000).catch(() => undefined);
      return seen;
    };

    // Each measurement waits for all of its send's calls, so none spill into the next one.
    const sends: [string, () => Promise<void>, Counts][] = [
      ['first sandbox', () => sandbox('first-sandbox@example.com'), withTally(SANDBOX_ACTORS, true)],
      ['sandbox', () => sandbox('sandbox@example.com'), withTally(SANDBOX_ACTORS, false)],
      ['first live', () => live('first-live@example.com'), withTally(LIVE_ACTORS, false)],
      ['live', () => live('live@example.com'), withTally(LIVE_ACTORS, false)],
    ];
    for (const [name, send, actors] of sends) {
      const seen = await measure(send, { ingress: INGRESS, actors }, name === 'first live');
      const { actor_call_local: here = 0, ...perSend } = perKind(minus(seen.actors, withTally({}, name === 'first sandbox')));
      const total = Object.values(seen.ingress)
        .concat(Object.values(perSend))
        .reduce((a, b) => a + b, 0);
      console.log(
        `calls per ${name} send (the tally's left out): ${total} in all; ingress ${JSON.stringify(perKind(seen.ingress))}, ` +
          `actor host ${JSON.stringify(perSend)}; ${here} run on the actor host without its sidecar`,
      );
      expect(seen, name).toEqual({ ingress: INGRESS, actors });
    }
  }, 240_000);
});
