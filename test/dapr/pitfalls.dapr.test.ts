// The @dapr/dapr 3.18 pitfalls (issue 3 item 5), one test each, against real daprd, placement,
// scheduler and Redis: Gatepost's Dapr adapter (dapr/adapter/) must not have them.
//
// One cluster: Gatepost's ingress and actor host, plus a `probe` sidecar whose app is a
// DaprRuntime running in this test process with probe actors, so a test can make a method throw
// or call back into its caller. Redis is a private redis-server, so a test can make it refuse
// writes without disturbing anything else on the machine.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaprCluster, freePort } from '../../dapr/cluster/cluster.ts';
import { defineActor } from '../../runtime/runtime.port.ts';
import { DaprRuntime } from '../../dapr/adapter/runtime.dapr.ts';
import { LEDGER_ACTOR, PAGE } from '../../dapr/adapter/ledger.ts';
import { MESSAGE_ACTOR } from '../../actors/message/message.actor.ts';
import { TENANT_ACTOR } from '../../actors/tenant/tenant.actor.ts';
import { RECIPIENT_ACTOR } from '../../actors/recipient/recipient.actor.ts';
import { BATCH_ACTOR } from '../../actors/batch/batch.actor.ts';
import { DELIVERY_ACTOR } from '../../actors/delivery/delivery.actor.ts';
import { WEBHOOK_ACTOR } from '../../actors/webhook/webhook.actor.ts';
import { AUTOMATION_RUN_ACTOR } from '../../actors/automation/automation.state.ts';
import { BROADCAST_ACTOR } from '../../actors/broadcast/broadcast.actor.ts';
import { SOURCE_IP_ACTOR } from '../../actors/source-ip/source.ip.actor.ts';
import { ADMIN_TOKEN, GatepostClient, dropDatabase, eventually, freshDatabase } from '../harness/gatepost.harness.ts';

const PROBE = 'ProbeActor';
const PROBE_TOPIC = 'probe.retry';
/** What the probe's `announce` publishes: the test reads it from the broker's stream. */
const ANNOUNCED = 'probe.announced';
/** A hand-over whose subscriber calls the probe's `capture`, which gives its event on CAPTURED again on replay. */
const READY = 'probe.ready';
const CAPTURED = 'probe.captured';

let redisPort: number;
let redis: ChildProcess;
let cluster: DaprCluster;
let probe: DaprRuntime;
let databaseUrl: string;
const client = new GatepostClient();
/** Deliveries the probe's subscriber saw: publication id and payload. */
const deliveries: { id: string; data: unknown; at: number }[] = [];
/** What the probe's subscriber of CAPTURED was given. */
const captured: unknown[] = [];

/** What the probe runtime's daprd holds under an actor's state key, parsed. */
async function stateOf(runtime: DaprRuntime, type: string, id: string, key: string): Promise<unknown> {
  const json = await runtime.sidecar.getStateJson(type, id, key);
  return json === undefined ? undefined : JSON.parse(json);
}

const redisCli = (...args: string[]) =>
  execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(redisPort), ...args])
    .toString()
    .trim();
/** Makes Redis refuse every write (OOM: "command not allowed when used memory > 'maxmemory'"); reads still work. */
const refuseWrites = () => redisCli('config', 'set', 'maxmemory', '1');
const acceptWrites = () => redisCli('config', 'set', 'maxmemory', '0');

/** What `waitForGate` waits for; the test replaces it before each use. */
const gate = { waiting: false, open: Promise.resolve(), release: () => {} };

// No class anywhere: the type is this string, and nothing else names it.
const probeActor = defineActor({
  type: PROBE,
  methods: {
    async echo(turn, args: unknown) {
      return { actor: `${turn.actorType}/${turn.actorId}`, args };
    },
    async set(turn, { key, value }: { key: string; value: unknown }) {
      turn.set(key, value);
    },
    async setThenThrow(turn, { key, value }: { key: string; value: unknown }) {
      turn.set(key, value);
      throw new Error('thrown after set');
    },
    /** Creates the actor's state under an id made for the call, as an admission does (ActorTurn.getNew). */
    async create(turn, { value }: { value: string }) {
      const found = await turn.getNew<string>('made');
      if (found !== undefined) return { found };
      turn.set('made', value);
      turn.set('also', value);
      return { created: value };
    },
    async read(turn, { key }: { key: string }) {
      return (await turn.get(key)) ?? null;
    },
    /** As a sandbox capture: counts its runs, and gives its event again on every run (ActorTurn.publishAgainOnReplay). */
    async capture(turn, { value }: { value: string }) {
      turn.set('runs', ((await turn.get<number>('runs')) ?? 0) + 1);
      turn.publishAgainOnReplay(CAPTURED, { value });
    },
    async announce(turn, { key, value }: { key: string; value: unknown }) {
      turn.set(key, value);
      turn.publish(ANNOUNCED, { key, value });
    },
    async remindAt(turn, { name, dueAt, data }: { name: string; dueAt: number; data?: unknown }) {
      turn.setReminder(name, dueAt, data);
    },
    async forget(turn, { name }: { name: string }) {
      turn.deleteReminder(name);
    },
    /** Waits until the test opens the gate (set by the test before the call). */
    async waitForGate() {
      gate.waiting = true;
      await gate.open;
    },
    /** Calls `target` (which waits for the gate), then sets `touched` on `then`. */
    async callThenTouch(turn, { target, then }: { target: string; then: string }) {
      await turn.invoke(PROBE, target, 'waitForGate', {});
      await turn.invoke(PROBE, then, 'set', { key: 'touched', value: true });
    },
    /** Calls `target`, passing `then` on: a chain of calls that may come back to an actor. */
    async relay(turn, { target, then }: { target?: string; then: string[] }): Promise<string> {
      if (!target) return `reached ${turn.actorId}`;
      return turn.invoke(PROBE, target, 'relay', { target: then[0], then: then.slice(1) });
    },
  },
  async onReminder(turn, name, data) {
    remindersRun.push({ actor: turn.actorId, name, data });
    // A reminder that sets itself again, as an automation's step sets its next wait.
    const again = (data as { again?: number } | undefined)?.again ?? 0;
    if (again > 0) turn.setReminder(name, Date.now() + 500, { again: again - 1 });
  },
});
/** The reminders the probe actors ran. */
const remindersRun: { actor: string; name: string; data: unknown }[] = [];
/** An app on the probe's sidecar, hosting the probe actor, publishing to the pub/sub component `pubsub`. */
function probeRuntime(pubsub: string): DaprRuntime {
  const runtime = new DaprRuntime({
    daprHttpPort: cluster.ports.probeHttp!,
    daprGrpcPort: cluster.ports.probeGrpc!,
    appPort: cluster.ports.probeApp!,
    pubsub,
    log: () => undefined,
  });
  runtime.register(probeActor);
  return runtime;
}

/** The actor types a sidecar reports, less daprd's own (workflow) types. */
async function hostedTypes(httpPort: number): Promise<string[]> {
  const meta = (await (await fetch(`http://127.0.0.1:${httpPort}/v1.0/metadata`)).json()) as {
    actorRuntime: { activeActors: { type: string }[] };
  };
  return meta.actorRuntime.activeActors
    .map((a) => a.type)
    .filter((t) => !t.startsWith('dapr.internal.'))
    .sort();
}

beforeAll(async () => {
  redisPort = await freePort();
  redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await eventually(() => {
    try {
      return redisCli('ping') === 'PONG';
    } catch {
      return false;
    }
  });
  databaseUrl = await freshDatabase();
  cluster = await DaprCluster.start({
    databaseUrl,
    redisHost: `127.0.0.1:${redisPort}`,
    sidecars: ['probe'],
    env: { GATEPOST_ADMIN_TOKEN: ADMIN_TOKEN, GATEPOST_SMTP_PORT: '0', GATEPOST_INBOUND_PORT: '0' },
  });
  client.url = cluster.url;
  probe = probeRuntime('pubsub');
  let failed = false;
  probe.subscribe(PROBE_TOPIC, async (delivery) => {
    deliveries.push({ id: delivery.id, data: delivery.data, at: Date.now() });
    // The first delivery fails, as a subscriber whose database is down would.
    if (!failed) {
      failed = true;
      throw new Error('subscriber failed');
    }
  });
  probe.subscribe(READY, async ({ data }) => {
    const { id, value } = data as { id: string; value: string };
    await probe.invoke(PROBE, id, 'capture', { value });
  });
  let capturedFailed = false;
  probe.subscribe(CAPTURED, async ({ data }) => {
    captured.push(data);
    if (!capturedFailed) {
      capturedFailed = true;
      throw new Error('subscriber of the captured event failed');
    }
  });
  await probe.start().catch((error: Error) => {
    throw new Error(
      `${error.message}; ${cluster.running('probe-daprd') ? 'it runs' : 'it exited'}\n${cluster.logTail('probe-daprd')}`,
    );
  });
  await cluster.actorHostReady('probe');
}, 180_000);

afterAll(async () => {
  await probe?.stop();
  await cluster?.stop();
  redis?.kill('SIGKILL');
  if (databaseUrl) await dropDatabase(databaseUrl);
});

describe('the @dapr/dapr 3.18 pitfalls, on the Dapr adapter', () => {
  it('registers actor types by their string, never a class name', async () => {
    // A probe registered as the string PROBE answers a call routed by daprd and placement.
    expect(await probe.invoke(PROBE, 'p1', 'echo', { n: 1 })).toEqual({ actor: `${PROBE}/p1`, args: { n: 1 } });
    // Beside it, every host hosts the adapter's ledger of reminders (dapr/adapter/ledger.ts).
    expect(await hostedTypes(cluster.ports.probeHttp!)).toEqual([LEDGER_ACTOR, PROBE].sort());
    // Gatepost's actor host registered exactly the string constants of its actor definitions.
    expect(await hostedTypes(cluster.ports.actorsHttp!)).toEqual(
      [
        MESSAGE_ACTOR,
        TENANT_ACTOR,
        RECIPIENT_ACTOR,
        BATCH_ACTOR,
        DELIVERY_ACTOR,
        WEBHOOK_ACTOR,
        AUTOMATION_RUN_ACTOR,
        BROADCAST_ACTOR,
        SOURCE_IP_ACTOR,
        LEDGER_ACTOR,
      ].sort(),
    );
  });

  it('saves nothing of a method that threw, then or with a later call', async () => {
    await expect(probe.invoke(PROBE, 'p2', 'setThenThrow', { key: 'a', value: 'from the throw' })).rejects.toThrow(
      /thrown after set/,
    );
    // A later call that succeeds and saves must not carry the thrown turn's write along.
    await probe.invoke(PROBE, 'p2', 'set', { key: 'b', value: 'later' });
    expect(await probe.invoke(PROBE, 'p2', 'read', { key: 'a' })).toBeNull();
    // And in the state store itself, read through daprd's actor state API:
    expect(await stateOf(probe, PROBE, 'p2', 'a')).toBeUndefined();
    expect(await stateOf(probe, PROBE, 'p2', 'b')).toBe('later');
  });

  it('fails the call when the state save fails, and answers no 202 for a send it could not save', async () => {
    refuseWrites();
    try {
      await expect(probe.invoke(PROBE, 'p3', 'set', { key: 'a', value: 'unsaved' })).rejects.toThrow(/state save/);
      const t = await client.tenant();
      // A sandbox send: this cluster has no relay and no verified domain, so a live one would be
      // refused by the gate's sender rule (422) before any state is saved.
      const send = () =>
        client.request('POST', '/v1/emails', {
          key: t.sandbox,
          body: { to: 'unsaved@example.com', subject: 's', html: '<p>h</p>', idempotency_key: 'pitfall-save' },
        });
      const refused = await send();
      expect(refused.status).toBe(500);
      acceptWrites();
      // Nothing of the failed turn is left: the value is not there, and the same idempotency key
      // admits the message afresh (no replay of an answer never given).
      expect(await probe.invoke(PROBE, 'p3', 'read', { key: 'a' })).toBeNull();
      expect(await stateOf(probe, PROBE, 'p3', 'a')).toBeUndefined();
      const admitted = await send();
      expect(admitted.status).toBe(202);
      expect(admitted.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      acceptWrites();
    }
  });

  it('gets a message again when its subscriber throws (RETRY, not an acknowledgement)', { timeout: 150_000 }, async () => {
    await probe.sidecar.publish('pubsub', PROBE_TOPIC, { n: 42 }, 'pub_pitfall_retry');
    // The Redis Streams component itself acknowledges a failed delivery, RETRY included: it is
    // daprd's inbound retry policy for the pub/sub (components/resiliency.yaml) that delivers again.
    await eventually(() => deliveries.length >= 2, 120_000);
    expect(deliveries.map((d) => d.id).slice(0, 2)).toEqual(['pub_pitfall_retry', 'pub_pitfall_retry']);
    expect(deliveries[1]!.data).toEqual({ n: 42 });
    console.log(`redelivered ${((deliveries[1]!.at - deliveries[0]!.at) / 1000).toFixed(1)} s after the subscriber threw`);
  });

  it(
    "hands a turn's event to its caller's own subscriber without the broker, and gives it again when that subscriber throws",
    { timeout: 150_000 },
    async () => {
      const calls = (kind: string, target: string) =>
        probe.sidecar.calls.snapshot().find((c) => c.kind === kind && c.target === target)?.count ?? 0;
      await probe.sidecar.publish('pubsub', READY, { id: 'p-capture', value: 'v1' }, 'pub_pitfall_capture');
      // The event's subscriber threw at first: the hand-over's subscriber, its caller, failed, the
      // hand-over came again, and the turn that ran for it gave the event again.
      await eventually(() => captured.length >= 2, 120_000);
      expect(captured.slice(0, 2)).toEqual([{ value: 'v1' }, { value: 'v1' }]);
      expect(await stateOf(probe, PROBE, 'p-capture', 'runs')).toBe(2);
      expect(calls('publication_received', READY)).toBeGreaterThanOrEqual(2);
      // Handed over in this app: never published to the broker, never delivered by daprd.
      expect(calls('publish', CAPTURED)).toBe(0);
      expect(calls('publication_received', CAPTURED)).toBe(0);
    },
  );

  it('registers a reminder days ahead at its absolute due time', async () => {
    // 3 days, 4 h, 5 min, 6.789 s ahead: a duration serialized without day units would lose the days.
    const dueAt = Date.now() + ((3 * 24 + 4) * 3600 + 5 * 60 + 6.789) * 1000;
    await probe.invoke(PROBE, 'p5', 'remindAt', { name: 'later', dueAt });
    // The actor keeps its reminder, to the millisecond, in its state...
    expect(await stateOf(probe, PROBE, 'p5', '__reminder/later')).toEqual({ due: dueAt, data: null });
    // ...and the ledger's page that wakes it is registered as every registration is: read back
    // through daprd's reminder API, what the scheduler stores is the absolute time.
    await probe.sidecar.setReminder(LEDGER_ACTOR, 'page_probe', PAGE, dueAt, []);
    const res = await fetch(
      `http://127.0.0.1:${cluster.ports.probeHttp}/v1.0/actors/${LEDGER_ACTOR}/page_probe/reminders/${PAGE}`,
    );
    expect(res.status).toBe(200);
    const reminder = (await res.json()) as { dueTime?: string };
    expect(Date.parse(reminder.dueTime!)).toBe(Math.round(dueAt));
    await probe.sidecar.deleteReminder(LEDGER_ACTOR, 'page_probe', PAGE);
  });

  it('runs a reminder that its own handler sets again (its actor cached what it read of the first)', async () => {
    await probe.invoke(PROBE, 'p14', 'remindAt', { name: 'chain', dueAt: Date.now(), data: { again: 2 } });
    await eventually(() => remindersRun.filter((r) => r.actor === 'p14').length === 3, 60_000);
    expect(remindersRun.filter((r) => r.actor === 'p14').map((r) => r.data)).toEqual([{ again: 2 }, { again: 1 }, { again: 0 }]);
  });

  it('runs a reminder as it was last set, once, and not one deleted', async () => {
    const soon = (s: number) => Date.now() + s * 1000;
    await probe.invoke(PROBE, 'p13', 'remindAt', { name: 'moved', dueAt: soon(1), data: { v: 1 } });
    await probe.invoke(PROBE, 'p13', 'remindAt', { name: 'moved', dueAt: soon(2), data: { v: 2 } });
    await probe.invoke(PROBE, 'p13', 'remindAt', { name: 'deleted', dueAt: soon(1) });
    await probe.invoke(PROBE, 'p13', 'forget', { name: 'deleted' });
    // Due after the others: once it has run, so would have they.
    await probe.invoke(PROBE, 'p13', 'remindAt', { name: 'last', dueAt: soon(4) });
    await eventually(() => remindersRun.some((r) => r.actor === 'p13' && r.name === 'last'), 60_000);
    expect(remindersRun.filter((r) => r.actor === 'p13')).toEqual([
      { actor: 'p13', name: 'moved', data: { v: 2 } },
      { actor: 'p13', name: 'last', data: undefined },
    ]);
    // Run, so gone from the actor's state.
    expect(await stateOf(probe, PROBE, 'p13', '__reminder/moved')).toBeUndefined();
  });

  it('stops a turn that daprd gave up on before it goes on to call another actor', async () => {
    gate.waiting = false;
    gate.open = new Promise<void>((resolve) => (gate.release = resolve));
    // p9 calls p11, which waits; meanwhile p9's caller goes away, so daprd cancels p9's call.
    const caller = new AbortController();
    const call = fetch(`http://127.0.0.1:${cluster.ports.probeHttp}/v1.0/actors/${PROBE}/p9/method/callThenTouch`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'p11', then: 'p10' }),
      signal: caller.signal,
    });
    await eventually(() => gate.waiting);
    const cutOffBefore = probe.stats().callsCutOff;
    caller.abort();
    await expect(call).rejects.toThrow();
    // The caller's fetch fails at once; daprd closes p9's call to this app a moment later.
    await eventually(() => probe.stats().callsCutOff > cutOffBefore);
    gate.release();
    // The next call to p9 runs after the cut-off turn has ended (the app runs p9's turns in order).
    expect(await probe.invoke(PROBE, 'p9', 'read', { key: 'touched' })).toBeNull();
    // That turn went no further than the call it was waiting on: p10 was never touched.
    expect(await stateOf(probe, PROBE, 'p10', 'touched')).toBeUndefined();
  });

  it('runs a call to an actor daprd placed here without the sidecar, and stops it when daprd deactivates that actor', async () => {
    const calls = (kind: string, target: string) =>
      probe.sidecar.calls.snapshot().find((c) => c.kind === kind && c.target === target)?.count ?? 0;
    // The first call goes through daprd, which places p20 here; the next one runs here.
    await probe.invoke(PROBE, 'p20', 'set', { key: 'k', value: 'v' });
    const [sent, here] = [calls('actor_invocation', `${PROBE}.read`), calls('actor_call_local', `${PROBE}.read`)];
    expect(await probe.invoke(PROBE, 'p20', 'read', { key: 'k' })).toBe('v');
    expect([calls('actor_invocation', `${PROBE}.read`), calls('actor_call_local', `${PROBE}.read`)]).toEqual([sent, here + 1]);

    // A call run here is under way on p20, waiting on p21. daprd deactivates p20 (placement moves
    // it to another host, or it was idle), as it does: its DELETE to this app, which it waits for
    // before the move goes ahead.
    gate.waiting = false;
    gate.open = new Promise<void>((resolve) => (gate.release = resolve));
    const call = probe.invoke(PROBE, 'p20', 'callThenTouch', { target: 'p21', then: 'p22' });
    const cutOff = expect(call).rejects.toThrow(/p21\/method\/waitForGate: This operation was aborted/);
    await eventually(() => gate.waiting);
    const deactivated = await fetch(`http://127.0.0.1:${cluster.ports.probeApp}/actors/${PROBE}/p20`, { method: 'DELETE' });
    expect(deactivated.status).toBe(200);
    // Answered once the call was cut off (its call to p21 aborted) and its turn had ended.
    await cutOff;
    gate.release();
    expect(await stateOf(probe, PROBE, 'p22', 'touched')).toBeUndefined();
    // Deactivated, p20 is not placed here any more: the next call goes through daprd.
    expect(await probe.invoke(PROBE, 'p20', 'read', { key: 'k' })).toBe('v');
    expect(calls('actor_invocation', `${PROBE}.read`)).toBe(sent + 1);
  });

  it('refuses a reentrant call at once instead of waiting on its own caller', async () => {
    // Not reentrant: p6 → p7 → p8 is fine…
    expect(await probe.invoke(PROBE, 'p6', 'relay', { target: 'p7', then: ['p8'] })).toBe('reached p8');
    // …but p6 → p7 → p6 would wait for p6's lock, held by the call waiting on it. It is refused.
    await expect(probe.invoke(PROBE, 'p6', 'relay', { target: 'p7', then: ['p6'] })).rejects.toThrow(
      /reentrant actor call refused: ProbeActor\/p6 → ProbeActor\/p7 → ProbeActor\/p6/,
    );
    // Refused, not stuck: both actors answer the next call.
    expect(await probe.invoke(PROBE, 'p6', 'relay', { target: 'p7', then: [] })).toBe('reached p7');
  });
  it('publishes what a turn saved when its host died before publishing it', { timeout: 150_000 }, async () => {
    // A host whose publishing fails (its pub/sub component name is wrong) leaves what a host that
    // died between a turn's save and its publishing leaves: the turn's outbox key, and the outbox
    // ledger's reminder naming it. Then it goes, and a sound host comes in its place.
    await probe.stop();
    const dying = probeRuntime('no-such-pubsub');
    await dying.start();
    await dying.invoke(PROBE, 'p12', 'announce', { key: 'said', value: 'p12 said it' });
    await dying.stop();
    probe = probeRuntime('pubsub');
    await probe.start();

    // The ledger's reminder fires on a host of its type and sweeps: the publication reaches the
    // broker (its Redis stream), and the key that held it is gone.
    const published = () => redisCli('xrange', ANNOUNCED, '-', '+').includes('p12 said it');
    expect(published()).toBe(false);
    await eventually(published, 90_000);
    expect(await stateOf(probe, PROBE, 'p12', 'said')).toBe('p12 said it');
    await eventually(() => redisCli('--scan', '--pattern', '*ProbeActor||p12||__outbox*') === '', 30_000);
  });

  it("takes a new actor's state as absent unread, and runs the turn again reading should it be there", async () => {
    const reads = () => probe.sidecar.calls.snapshot().find((c) => c.kind === 'state_read' && c.target === PROBE)?.count ?? 0;
    const before = reads();
    expect(await probe.invoke(PROBE, 'p16', 'create', { value: 'first' })).toEqual({ created: 'first' });
    expect(reads()).toBe(before);
    // The same call again on a host that knows nothing of the actor, as when daprd ran it again
    // after a commit whose answer was lost: daprd deactivated it here, so this host forgets it.
    const deactivated = await fetch(`http://127.0.0.1:${cluster.ports.probeApp}/actors/${PROBE}/p16`, { method: 'DELETE' });
    expect(deactivated.status).toBe(200);
    expect(await probe.invoke(PROBE, 'p16', 'create', { value: 'second' })).toEqual({ found: 'first' });
    expect(reads()).toBe(before + 1);
    expect(await stateOf(probe, PROBE, 'p16', 'made')).toBe('first');
    expect(await stateOf(probe, PROBE, 'p16', 'also')).toBe('first');
  });

  it('reads what its actors hold afresh once its sidecar has restarted', async () => {
    // The host caches what its actors read and wrote. Its sidecar dies and comes back while the
    // app runs on: meanwhile the actor lived elsewhere, and another host changed its state.
    await probe.invoke(PROBE, 'p15', 'set', { key: 'k', value: 'before' });
    expect(await probe.invoke(PROBE, 'p15', 'read', { key: 'k' })).toBe('before');
    await cluster.kill('probe-daprd');
    // The host runs a call to an actor placed here without its sidecar, but not once a connection
    // to that sidecar has closed: the call fails, and does not answer from what the host cached.
    await eventually(() =>
      probe.invoke(PROBE, 'p15', 'read', { key: 'k' }).then(
        () => false,
        () => true,
      ),
    );
    const key = redisCli('--scan', '--pattern', '*ProbeActor||p15||k');
    expect(key).toMatch(/ProbeActor\|\|p15\|\|k$/);
    redisCli('hset', key, 'data', JSON.stringify('changed elsewhere'));
    await cluster.restart('probe-daprd');
    await cluster.actorHostReady('probe');
    expect(await probe.invoke(PROBE, 'p15', 'read', { key: 'k' })).toBe('changed elsewhere');
  });
});
