// The Dapr adapter of the runtime port. Calls go to the app's daprd sidecar over its HTTP API;
// actors and subscriptions are served on the app port with Dapr's actor-host callback routes.
// Written against the HTTP API rather than @dapr/dapr 3.18, whose actor runtime registers types
// by class name, saves the state of a method that threw, drops a failed state save, and acks a
// subscriber that threw (see dapr/README.md).
//
// Reminders live in the actor's state (`__reminder/<name>`: when it is due, and its data); the
// scheduler only wakes the actor up. Each wake-up is an entry on a page of the adapter's ledger
// (ledger.ts): one scheduler reminder for every entry due in the same second that turns committed
// together. A page that fires asks each actor it names, with the internal actor method `__ledger`,
// to run the reminder if it is still due then, as it is set in its state (a reminder replaced or
// deleted since is not); the host that registered a page deletes it once none of its entries is
// wanted any more.
//
// Turn commit, in this order, so a crash at any point loses nothing acknowledged:
//   1. the ledger names each reminder the turn sets; if the turn publishes, also its outbox key
//      (pages due 15 s later), so that a page sweeps what its host never published. What the turn
//      hands over (ActorTurn.handOver: an admission's `message.ready`) is published now instead,
//      with no outbox key and no ledger entry: its subscriber finds nothing should step 2 fail.
//   2. the state transaction: the turn's writes, its reminders, and its publications under its
//      outbox key. A page that fires on a turn that never saved finds nothing due. A turn that
//      took a key as absent unread (ActorTurn.getNew) saves create-only, and should that fail,
//      runs again, reading.
//   3. a follow-up turn publishes what the key holds and deletes it; the ledger lets go of the
//      page entries no longer wanted (this outbox key, reminders replaced or deleted). What the
//      turn publishes for a redelivered publication (ActorTurn.publishAgainOnReplay: a sandbox
//      capture's event) is published at once instead, within the turn, with no outbox key: should
//      it fail, the turn's caller fails, and the publication's redelivery publishes it again. Where
//      that caller is in this process and the topic is subscribed here, the caller hands it to its
//      subscriber itself once the call has answered (carried, below): no broker, same guarantee.
// Dapr's transactional outbox does not cover actor state, hence the outbox keys.
import type { ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { newId } from '../../lib/ids.ts';
import type { ActorDefinition, ActorRuntime, ActorTurn, Delivery, Held, Subscriber } from '../../runtime/runtime.port.ts';
import { TurnRecorder } from '../../runtime/turn.recorder.ts';
import { CALLER_HEADER, CHAIN_HEADER, SidecarClient, type MethodEnvelope } from './sidecar.client.ts';
import { decodeReminderData } from './reminder.grpc.ts';
import { LEDGER_ACTOR, Ledger, dueSecond, type ActorEntry, type LedgerEntry, type Release } from './ledger.ts';

/** The prefix of a turn's outbox key. */
const OUTBOX = '__outbox/';
/** The prefix of the key that holds a reminder. */
const REMINDER = '__reminder/';
/** The actor method a ledger page calls for each entry it names. */
const LEDGER_METHOD = '__ledger';
/** How long a publication may stay unpublished before the ledger's page sweeps it. */
const OUTBOX_RETRY_MS = 15_000;
const REMINDER_RETRY_MS = 5_000;
/**
 * How long daprd's deactivation of an actor waits for the calls run here on it (`invokeHere`):
 * as long as daprd waits for its own calls under way (drainOngoingCallTimeout, below).
 */
const HALT_WAIT_MS = 2_000;
/** How many actors a page that fires asks at once. */
const SWEEP_CONCURRENCY = 16;

/**
 * A state value from its JSON, a new object each time. The adapter keeps state as JSON text, as
 * daprd sends and takes it: a read parses it, a write stringifies it once and the transaction's
 * body carries it as it is. Kept as objects instead, each read was a structuredClone and each
 * write a stringify, a parse and the transaction's stringify again: about 110 us of the actor
 * host's CPU a sandbox send in a profile; measured, the actor host's CPU a send went from 0.85 to
 * 0.77 ms (medians of three alternating runs, bench/RESULTS.md, thirty-first pass).
 */
const parsed = <T>(json: string | undefined): T | undefined => (json === undefined ? undefined : (JSON.parse(json) as T));

/** What a ledger entry is of, for the log. */
const describeEntry = (e: LedgerEntry): string =>
  e.kind === 'held'
    ? `publishing held ${e.topic} ${e.id} again`
    : `${e.kind === 'reminder' ? `reminder ${e.name}` : 'publishing'} of ${e.type}/${e.id}`;

/** A reminder as the actor's state holds it. */
interface StoredReminder {
  /** When it is due (ms since epoch), exactly as set. */
  due: number;
  data: unknown;
}

interface Publication {
  id: string;
  topic: string;
  data: unknown;
}

/** A publication a turn asked for, before it has an id. */
type Outgoing = Omit<Publication, 'id'>;

/** A call from this process (its CALLER_HEADER), and whether daprd has cut it off. */
interface Carry {
  caller: string;
  cutOff: CutOff;
}

/**
 * Whether a call was given up on: daprd closed the connection of a call the app serves before the
 * answer (placement moved the actor, the caller's deadline passed), or daprd halted the actor a
 * call run here was on (`invokeHere`). The AbortSignal for the calls the call's turn makes in turn
 * is made only when one is: most turns call no other actor, and an AbortController made for every
 * call served cost the actor host 20 us of its event loop each (two a sandbox send; bench:send on
 * Dapr, profiled, on the forty-first pass's slow machine).
 */
class CutOff {
  aborted = false;
  private controller: AbortController | null = null;
  private listeners: (() => void)[] | null = null;

  /** Cut off should `res`, the answer to a call served, close unfinished. */
  static servedOn(res: ServerResponse, onCut: () => void): CutOff {
    const cutOff = new CutOff();
    res.once('close', () => {
      if (res.writableFinished) return;
      onCut();
      cutOff.cut();
    });
    return cutOff;
  }

  cut(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.controller?.abort();
    for (const listener of this.listeners ?? []) listener();
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Called once, should the call be cut off. */
  onCut(listener: () => void): void {
    (this.listeners ??= []).push(listener);
  }
}

/** What a committed turn left to publish: its outbox key, and the ledger's call once published. */
interface Unpublished {
  key: string;
  published: Release;
}

export interface DaprRuntimeOptions {
  daprHttpPort: number;
  /** The sidecar's gRPC API, where reminders are registered (with a failure policy). */
  daprGrpcPort: number;
  /** The port this app serves Dapr's callbacks on; null for an app that hosts nothing. */
  appPort: number | null;
  pubsub: string;
  log?: (message: string, error?: unknown) => void;
}

class HostedActor {
  /** Values read or written so far, as their JSON; `undefined` marks a key known to be absent. */
  readonly cache = new Map<string, string | undefined>();
  /**
   * Every key it has is in `cache`: a turn on this host created its state (ActorTurn.handOver),
   * and every later write went through here, so a key not cached is absent, with no read.
   */
  cacheWhole = false;
  /** The ledger entries of its reminders this host registered, by name, to let go when replaced. */
  readonly reminders = new Map<string, Release>();
  tail: Promise<unknown> = Promise.resolve();
  /**
   * When daprd last placed it here (served a call to it), as the runtime's `placements`
   * then; -1 once daprd has deactivated it.
   */
  placedIn = -1;
  /** The calls run here on it without the sidecar (`invokeHere`), each cut off should daprd halt it. */
  readonly callsHere = new Set<CutOff>();
  constructor(
    readonly type: string,
    readonly id: string,
  ) {}

  /**
   * daprd deactivated it (placement moved it, or it was idle) or restarted: no call runs here on it
   * any more, those under way are cut off (they stop at their next call to another actor), and
   * their turns are waited for, at most `waitMs`.
   */
  async halt(waitMs: number): Promise<void> {
    this.placedIn = -1;
    if (this.callsHere.size === 0) return;
    for (const cutOff of this.callsHere) cutOff.cut();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.tail, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }
}

export class DaprRuntime implements ActorRuntime {
  readonly sidecar: SidecarClient;
  private readonly definitions = new Map<string, ActorDefinition>();
  private readonly subscribers = new Map<string, Subscriber>();
  private readonly hosted = new Map<string, HostedActor>();
  private readonly log: (message: string, error?: unknown) => void;
  private readonly ledger: Ledger;
  private app: FastifyInstance | null = null;
  /** This process, in the CALLER_HEADER of the calls it makes outside any turn, with their number. */
  private readonly self = newId('host');
  private callsMade = 0;
  /**
   * What the turns of calls from this process left for their caller to hand to this process's
   * subscribers (a sandbox capture's event), by the call's CALLER_HEADER: see `carry`.
   */
  private readonly carried = new Map<string, Outgoing[]>();
  private callsCutOff = 0;
  private running = 0;
  /**
   * How many times a connection from this app to its daprd closed: daprd may have died, and
   * placement may move its actors elsewhere without deactivating them here, so none counts as
   * placed here any more (HostedActor.placedIn) until daprd serves a call to it again. Those
   * connections are kept open while idle (sidecar.client.ts); daprd's own to the app are not
   * watched: it closes them whenever more than two are idle.
   */
  private placements = 0;
  /**
   * Whether the pub/sub component hands a publication out again until a subscriber acknowledges
   * it: Redis Streams claims for another consumer what one has held unacknowledged for
   * `processingTimeout` (components/pubsub.yaml), so a subscriber that died owes nothing, and an
   * actor needs no watchdog reminder of its own (ActorTurn.deliversUntilHandled). Known once started.
   */
  get brokerRedelivers(): boolean {
    return this.redelivers;
  }
  private redelivers = false;
  private stopping = false;

  constructor(private readonly opts: DaprRuntimeOptions) {
    this.sidecar = new SidecarClient({ http: opts.daprHttpPort, grpc: opts.daprGrpcPort });
    this.log = opts.log ?? ((m, e) => console.error(m, e ?? ''));
    this.ledger = new Ledger(this.sidecar, this.log);
  }

  register(definition: ActorDefinition): void {
    if (this.definitions.has(definition.type)) throw new Error(`actor type ${definition.type} is already registered`);
    this.definitions.set(definition.type, definition);
  }

  subscribe(topic: string, subscriber: Subscriber): void {
    if (this.subscribers.has(topic)) throw new Error(`topic ${topic} already has a subscriber`);
    this.subscribers.set(topic, subscriber);
  }

  /**
   * A call from outside any turn. The turn it runs may leave publications for this caller to hand
   * to this process's subscribers (`carry`): handed before it answers, so a caller that is itself
   * a subscriber returns only once they are handled, and should one throw, the caller throws.
   */
  async invoke<R>(actorType: string, actorId: string, method: string, args?: unknown): Promise<R> {
    // An app that subscribes to nothing (the ingress) is never left anything: its calls carry no id.
    if (this.subscribers.size === 0) return this.sidecar.invokeActor<R>(actorType, actorId, method, args);
    const caller = `${this.self}.${++this.callsMade}`;
    const here = this.hosted.get(`${actorType}\0${actorId}`);
    try {
      const value =
        here?.placedIn === this.placements
          ? await this.invokeHere<R>(here, method, args, caller)
          : await this.sidecar.invokeActor<R>(actorType, actorId, method, args, [], undefined, caller);
      for (const p of this.carried.get(caller) ?? []) await this.deliverHere(p.topic, p.data);
      return value;
    } finally {
      this.carried.delete(caller);
    }
  }

  /**
   * A call to an actor daprd has placed on this app, run here, not through the sidecar and back:
   * two calls fewer (a sandbox send's capture, which its hand-over's subscriber on this host asks
   * of the message its admission ran here). It runs as a served call would: its turn waits for
   * the actor's turns under way here (its tail) and leaves its carried publications for this
   * caller. daprd cannot place the actor elsewhere meanwhile: placement moves an actor only once
   * every host has halted those it loses, and daprd halts one by deactivating it here (DELETE
   * below), which cuts this call off and waits for its turn (HostedActor.halt). A daprd that
   * died deactivates nothing: any connection to it that closes ends every placement here
   * (`placements`), so that a call after it goes through a sidecar, and fails if none answers.
   * Calls from inside a turn still go through the sidecar. Measured (bench:send --runtime dapr,
   * three pairs in turns, bench/RESULTS.md forty-second pass): accepted sends 1.02-1.17 ×, CPU a
   * send 0.82-0.96 ×, sends admitted and captured 1.14-1.34 ×.
   */
  private async invokeHere<R>(a: HostedActor, method: string, args: unknown, caller: string): Promise<R> {
    this.sidecar.calls.count('actor_call_local', `${a.type}.${method}`);
    const cutOff = new CutOff();
    a.callsHere.add(cutOff);
    try {
      return await this.turn(a.type, a.id, [], (def, turn) => this.runMethod(def, turn, method, args) as Promise<R>, cutOff, {
        caller,
        cutOff,
      });
    } finally {
      a.callsHere.delete(cutOff);
    }
  }

  /** An actor method's body, run in `turn`, whether daprd served the call or it runs here; `__ledger` is the ledger's. */
  private runMethod(def: ActorDefinition, turn: DaprTurn, method: string, args: unknown): Promise<unknown> {
    if (method === LEDGER_METHOD) return this.wake(def, turn, args as ActorEntry);
    const fn = def.methods[method];
    if (!fn) throw new Error(`actor type ${def.type} has no method ${method}`);
    return fn(turn, args);
  }

  /** Calls daprd gave up on before their answer (placement moved the actor, a caller's deadline passed). */
  stats(): { callsCutOff: number } {
    return { callsCutOff: this.callsCutOff };
  }

  /** Cut off when daprd closes the connection of a call before it has its answer: it gave up on it. */
  private cutOff(res: ServerResponse): CutOff {
    return CutOff.servedOn(res, () => this.callsCutOff++);
  }

  async start(): Promise<void> {
    if (this.opts.appPort !== null) {
      this.app = this.appServer();
      this.sidecar.onDisconnect(() => this.placements++);
      await this.app.listen({ port: this.opts.appPort, host: '127.0.0.1' });
    }
    // The sidecar answers once it has loaded its components and found this app.
    for (let i = 0; !(await this.sidecar.healthy()); i++) {
      if (i === 600) throw new Error(`daprd on ${this.sidecar.base} did not become healthy`);
      await new Promise((r) => setTimeout(r, 100));
    }
    this.redelivers = (await this.sidecar.componentType(this.opts.pubsub)) === 'pubsub.redis';
  }

  async stop(): Promise<void> {
    // First refuse new deliveries and reminder firings (Dapr hands them out again later), but
    // keep serving actor calls: the work under way makes them, through the sidecar and back.
    this.stopping = true;
    while (this.running > 0) await new Promise((r) => setTimeout(r, 10));
    // Then close, with daprd's kept-alive connections.
    const closed = this.app?.close();
    this.app?.server.closeAllConnections();
    await closed;
    await this.sidecar.close();
  }

  private appServer(): FastifyInstance {
    const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
    // daprd sends actor calls as JSON, sometimes with no content type or an empty body.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
      try {
        done(null, body === '' ? null : JSON.parse(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });

    app.get('/healthz', async () => ({ status: 'ok' }));
    // drainOngoingCallTimeout must stay well below placement's dissemination deadline (8 s): when
    // the table changes, daprd blocks every actor type whose ring moved and waits this long for
    // the calls under way. A turn that calls another actor (admit → RecipientActor, attempt →
    // MessageActor) cannot finish while that other type is blocked, so the wait always runs out.
    // At 30 s (clamped by daprd to 24 s) placement dropped this host as unresponsive, and daprd
    // 1.18.2 never unblocked the types of that aborted round: every call hung (dapr/README.md).
    app.get('/dapr/config', async () => {
      // A daprd starting (this app's, restarted while the app ran on) asks first: the actors it
      // places here may have lived on another host meanwhile, so nothing cached of them holds.
      for (const a of this.hosted.values()) void a.halt(0);
      this.hosted.clear();
      return {
        entities: [...this.definitions.keys(), LEDGER_ACTOR],
        actorIdleTimeout: '30m',
        drainOngoingCallTimeout: '2s',
        drainRebalancedActors: true,
        reentrancy: { enabled: false },
      };
    });
    app.get('/dapr/subscribe', async () =>
      [...this.subscribers.keys()].map((topic) => ({
        pubsubname: this.opts.pubsub,
        topic,
        route: `/dapr/events/${encodeURIComponent(topic)}`,
      })),
    );
    app.post<{ Params: { topic: string }; Body: { id?: string; data?: unknown } }>('/dapr/events/:topic', async (request) => {
      const subscriber = this.subscribers.get(request.params.topic);
      this.sidecar.calls.count('publication_received', request.params.topic);
      if (!subscriber) return { status: 'DROP' };
      const delivery = { id: request.body?.id ?? '', topic: request.params.topic, data: request.body?.data };
      try {
        await this.tracked(() => this.handTo(subscriber, delivery));
        return { status: 'SUCCESS' };
      } catch (error) {
        // RETRY, not an error status: the broker redelivers, and nothing is acknowledged by accident.
        this.log(`subscriber of ${request.params.topic} failed; will retry`, error);
        return { status: 'RETRY' };
      }
    });
    // Every reminder registered is a ledger page (a reminder of any other type is from no turn of ours).
    app.put<{ Params: { type: string; id: string; name: string }; Body: { data?: unknown } | null }>(
      '/actors/:type/:id/method/remind/:name',
      async (request) => {
        const { type, id, name } = request.params;
        this.sidecar.calls.count('reminder_fired', type);
        if (type !== LEDGER_ACTOR) {
          this.log(`reminder ${name} of ${type}/${id} is no ledger page; dropped`);
          return {};
        }
        const entries = decodeReminderData(request.body?.data) as LedgerEntry[];
        let left = entries;
        try {
          left = await this.tracked(() => this.sweep(entries));
        } catch (error) {
          this.log(`ledger page ${id} could not be swept; will retry`, error);
        }
        // Try again later ourselves, with what is left: what the scheduler does with a failed callback varies.
        if (left.length > 0) await this.sidecar.setReminder(type, id, name, Date.now() + REMINDER_RETRY_MS, left);
        return {};
      },
    );
    app.put('/actors/:type/:id/method/timer/:name', async () => ({}));
    app.put<{ Params: { type: string; id: string; method: string }; Body: unknown }>(
      '/actors/:type/:id/method/:method',
      async (request, reply) => {
        const { type, id, method } = request.params;
        this.sidecar.calls.count('actor_call_served', `${type}.${method}`);
        this.hostedActor(type, id).placedIn = this.placements;
        const header = request.headers[CHAIN_HEADER];
        const chain = typeof header === 'string' && header !== '' ? header.split(',').map(decodeURIComponent) : [];
        const caller = request.headers[CALLER_HEADER];
        const cutOff = this.cutOff(reply.raw);
        const carry = typeof caller === 'string' && caller.startsWith(`${this.self}.`) ? { caller, cutOff } : undefined;
        try {
          const value = await this.turn(
            type,
            id,
            chain,
            (def, turn) => this.runMethod(def, turn, method, request.body),
            cutOff,
            carry,
          );
          return { ok: value ?? null } satisfies MethodEnvelope;
        } catch (error) {
          if (error instanceof GatepostError) return { error: error.toBody() } satisfies MethodEnvelope;
          // Answered with 200 too, never an error status: daprd's resiliency policy (pre-lock
          // retries) retries a call whose app answered an error, running the method again, and
          // nested calls multiply it. A turn whose state save failed behind a send was run 40 × 40
          // times, far past the caller's deadline. Whether to try again is the caller's choice.
          this.log(`actor ${type}/${id} ${method} failed`, error);
          return { failed: error instanceof Error ? error.message : String(error) } satisfies MethodEnvelope;
        }
      },
    );
    app.delete<{ Params: { type: string; id: string } }>('/actors/:type/:id', async (request) => {
      const key = `${request.params.type}\0${request.params.id}`;
      const a = this.hosted.get(key);
      this.hosted.delete(key);
      // Well within placement's dissemination deadline (8 s), which waits for this answer.
      await a?.halt(HALT_WAIT_MS);
      return {};
    });
    return app;
  }

  /** Work that starts here (a delivery, a reminder firing); refused once stop() has begun. */
  private async tracked<T>(work: () => Promise<T>): Promise<T> {
    if (this.stopping) throw new Error('the actor runtime is stopping');
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
    }
  }

  /**
   * One turn on a hosted actor: its calls run one at a time, and it commits or saves nothing.
   * `chain` lists the actors whose turns wait on this one (the call's CHAIN_HEADER).
   */
  private turn<R>(
    type: string,
    id: string,
    chain: string[],
    body: (def: ActorDefinition, turn: DaprTurn) => Promise<R>,
    cutOff?: CutOff,
    carry?: Carry,
  ): Promise<R> {
    const def = this.definitions.get(type);
    if (!def) return Promise.reject(new Error(`this app hosts no actor type ${type}`));
    const actor = this.hostedActor(type, id);
    const run = actor.tail.then(() => this.runTurn(actor, def, body, [...chain, `${type}/${id}`], cutOff, carry));
    actor.tail = run.catch(() => undefined);
    return run;
  }

  /** Runs and commits one turn; `readsAll`: a turn that took state as absent unread runs again reading it. */
  private async runTurn<R>(
    a: HostedActor,
    def: ActorDefinition,
    body: (def: ActorDefinition, turn: DaprTurn) => Promise<R>,
    chain: string[],
    cutOff: CutOff | undefined,
    carry: Carry | undefined,
    readsAll = false,
  ): Promise<R> {
    const turn = new DaprTurn(this, a, chain, cutOff, readsAll);
    const result = await body(def, turn);
    let unpublished: Unpublished | null;
    try {
      unpublished = await this.commit(a, turn);
    } catch (error) {
      if (!turn.createsOnly) throw error;
      // What it took as absent (ActorTurn.getNew) may be there: daprd ran the call again after
      // a commit whose answer was lost, here or on a host that died. Its transaction saved none
      // of its keys that were there; this host's cache of the actor may not know them either.
      a.cache.clear();
      a.cacheWhole = false;
      return this.runTurn(a, def, body, chain, cutOff, carry, true);
    }
    if (unpublished) void this.publishOutbox(a, unpublished);
    const replayable = carry ? this.carry(carry, turn.replayable) : turn.replayable;
    await Promise.all(replayable.map((p) => this.publish(p.topic, p.data)));
    return result;
  }

  /**
   * Leaves a turn's publications for a redelivered one (publishAgainOnReplay) to topics subscribed
   * here with the turn's caller, in this process, which hands them to the subscribers once the
   * call answers (`invoke`); answers the rest, to publish. Gatepost's subscriptions are all its
   * actor hosts' (one app id, one consumer group: the broker would hand each publication to one of
   * them anyway), and the redelivery that stands for an outbox stands for this: the caller returns
   * only after the subscribers, and should it fail (a subscriber threw, daprd cut the call off),
   * the publication it runs for comes again, and the turn publishes again. So a sandbox send's
   * event costs no publish and no delivery through the sidecar. The subscriber is not run inside
   * the turn: daprd holds the actor's lock until the call answers, and a subscriber may call the
   * same actor (an automation reads the message whose event it hears).
   */
  private carry({ caller, cutOff }: Carry, publications: readonly Outgoing[]): readonly Outgoing[] {
    if (publications.length === 0 || cutOff.aborted) return publications;
    const here: Outgoing[] = [];
    const elsewhere: Outgoing[] = [];
    for (const p of publications) (this.subscribers.has(p.topic) ? here : elsewhere).push(p);
    if (here.length === 0) return publications;
    this.carried.set(caller, here);
    // Cut off, the caller has failed and its publication comes again: nothing is left waiting.
    cutOff.onCut(() => this.carried.delete(caller));
    return elsewhere;
  }

  /** A publication handed to this process's subscriber of its topic, as the broker would hand it. */
  private deliverHere(topic: string, data: unknown): Promise<void> {
    return this.handTo(this.subscribers.get(topic)!, { id: newId('pub'), topic, data });
  }

  /** A delivery given to its subscriber; one it holds is acknowledged once a ledger page names it (`hold`). */
  private async handTo(subscriber: Subscriber, delivery: Delivery): Promise<void> {
    const held = await subscriber(delivery);
    if (held) await this.hold(delivery, held);
  }

  private hostedActor(type: string, id: string): HostedActor {
    const key = `${type}\0${id}`;
    let a = this.hosted.get(key);
    if (!a) {
      a = new HostedActor(type, id);
      this.hosted.set(key, a);
    }
    return a;
  }

  /** Steps 1 and 2 of the commit; answers what is left to publish, if anything. */
  private async commit(a: HostedActor, turn: DaprTurn): Promise<Unpublished | null> {
    // Everything the transaction saves, the adapter's own keys with the turn's: the cache follows it.
    const writes = new Map(turn.stateWrites);
    /** The ledger entries of the reminders the turn sets, by name. */
    const entering = new Map<string, Promise<Release>>();
    for (const [name, r] of turn.reminderWrites) {
      if (r === null) {
        writes.set(REMINDER + name, undefined);
        continue;
      }
      writes.set(REMINDER + name, JSON.stringify({ due: r.dueAt, data: r.data ?? null } satisfies StoredReminder));
      const entry: LedgerEntry = { kind: 'reminder', type: a.type, id: a.id, name, due: r.dueAt };
      entering.set(name, this.ledger.enter(entry, dueSecond(r.dueAt)));
    }
    let outbox: { key: string; entered: Promise<Release> } | null = null;
    if (turn.published.length > 0) {
      const key = OUTBOX + newId('pub');
      writes.set(key, JSON.stringify(turn.published.map((p): Publication => ({ id: newId('pub'), ...p }))));
      const entry: LedgerEntry = { kind: 'outbox', type: a.type, id: a.id, key };
      outbox = { key, entered: this.ledger.enter(entry, dueSecond(Date.now() + OUTBOX_RETRY_MS)) };
    }
    const allEntered = [...entering.values(), ...(outbox ? [outbox.entered] : [])];
    try {
      await Promise.all([...allEntered, ...turn.handedOver.map((p) => this.publish(p.topic, p.data))]);
      await this.sidecar.saveState(a.type, a.id, writes, turn.createsOnly);
    } catch (error) {
      // Nothing saved: the ledger need not wake anyone for this turn (once it has its entries).
      for (const e of allEntered)
        void e.then(
          (release) => release(),
          () => undefined,
        );
      throw error;
    }
    for (const [key, value] of writes) {
      // An outbox key is never used again once published: forgotten, not cached as absent.
      if (value === undefined && key.startsWith(OUTBOX)) a.cache.delete(key);
      else a.cache.set(key, value);
    }
    // A turn that hands over creates its actor's state: the actor had none before it. A sandbox
    // capture's read of its message's outcomes is answered from here (12 calls a send, not 13).
    if (turn.handedOver.length > 0) a.cacheWhole = true;
    // The reminders replaced or deleted: their earlier wake-ups are not wanted any more.
    for (const name of turn.reminderWrites.keys()) {
      a.reminders.get(name)?.();
      a.reminders.delete(name);
    }
    for (const [name, entered] of entering) a.reminders.set(name, await entered);
    return outbox ? { key: outbox.key, published: await outbox.entered } : null;
  }

  /** Step 3, as a turn of its own: publish what the turn's outbox key holds, then delete it. */
  private async publishOutbox(a: HostedActor, { key, published }: Unpublished): Promise<void> {
    try {
      await this.turn(a.type, a.id, [], (_def, turn) => this.publishFrom(turn, key));
      published();
    } catch (error) {
      // The ledger's page still names the key: its sweep tries again.
      this.log(`publishing from ${a.type}/${a.id} failed; the ledger will try again`, error);
    }
  }

  /**
   * A ledger page fired: each actor it names runs what is still due (most of an outbox page's
   * have published already). Answers the entries that could not be done, to try again.
   */
  private async sweep(entries: LedgerEntry[]): Promise<LedgerEntry[]> {
    const left: LedgerEntry[] = [];
    for (let i = 0; i < entries.length; i += SWEEP_CONCURRENCY) {
      await Promise.all(
        entries.slice(i, i + SWEEP_CONCURRENCY).map((e) =>
          (e.kind === 'held'
            ? this.sidecar.publish(this.opts.pubsub, e.topic, e.data, e.id)
            : this.sidecar.invokeActor(e.type, e.id, LEDGER_METHOD, e)
          ).catch((error) => {
            this.log(`${describeEntry(e)} failed; will retry`, error);
            left.push(e);
          }),
        ),
      );
    }
    return left;
  }

  /**
   * A delivery the subscriber holds is acknowledged only once a ledger page names it: should this
   * host die holding it, the page publishes it again (with its id) `leaseMs` later. The page lets
   * go of it once the hold ends; a hold that fails leaves it named, to be published again then.
   */
  private async hold(delivery: Delivery, held: Held): Promise<void> {
    const entry: LedgerEntry = { kind: 'held', topic: delivery.topic, id: delivery.id, data: delivery.data };
    const release = await this.ledger.enter(entry, dueSecond(Date.now() + held.leaseMs));
    held.until.then(release, (error: unknown) => {
      this.log(`held ${delivery.topic} ${delivery.id} failed; it is published again when its ledger page fires`, error);
    });
  }

  /** What a ledger page asks of the actor: to publish its outbox key, or run its reminder if still due as set. */
  private async wake(def: ActorDefinition, turn: DaprTurn, entry: ActorEntry): Promise<void> {
    if (entry.kind === 'outbox') return this.publishFrom(turn, entry.key);
    const reminder = await turn.get<StoredReminder>(REMINDER + entry.name);
    if (!reminder || reminder.due !== entry.due) return;
    if (!def.onReminder) throw new Error(`actor type ${turn.actorType} has no reminder handler`);
    // Fired, so gone, unless the handler sets it again (its own setReminder comes after this).
    turn.deleteReminder(entry.name);
    await def.onReminder(turn, entry.name, reminder.data === null ? undefined : reminder.data);
  }

  /**
   * Publishes what the outbox key `key` of the turn's actor holds, each publication with its
   * stable id (so a subscriber can tell a redelivery), then deletes the key.
   */
  private async publishFrom(turn: DaprTurn, key: string): Promise<void> {
    const pending = await turn.get<Publication[]>(key);
    if (!pending) return;
    for (const p of pending) await this.sidecar.publish(this.opts.pubsub, p.topic, p.data, p.id);
    turn.delete(key);
  }

  /** Straight to the pub/sub component through the sidecar: durable in the broker once it answers. */
  async publish(topic: string, data: unknown): Promise<void> {
    await this.sidecar.publish(this.opts.pubsub, topic, data, newId('pub'));
  }

  async readState<T>(a: HostedActor, key: string): Promise<T | undefined> {
    if (!a.cache.has(key)) a.cache.set(key, a.cacheWhole ? undefined : await this.sidecar.getStateJson(a.type, a.id, key));
    // Parsed afresh on every read, so no caller can change the cached state behind the turn's back.
    return parsed<T>(a.cache.get(key));
  }
}

class DaprTurn extends TurnRecorder implements ActorTurn {
  /** Key → its new value as JSON, or `undefined` to delete it. */
  readonly stateWrites = new Map<string, string | undefined>();
  /** Publications published before the commit (handOver), not kept under an outbox key; most turns have none. */
  private handOvers: Outgoing[] | null = null;
  /** Publications published straight after the commit (publishAgainOnReplay), not kept either. */
  private replays: Outgoing[] | null = null;

  constructor(
    private readonly runtime: DaprRuntime,
    private readonly a: HostedActor,
    /** This actor and those waiting on it, outermost first, as `type/id`. */
    private readonly chain: string[],
    /** Whether daprd gave up on the call this turn answers. */
    private readonly cutOff?: CutOff,
    /** Reads every key it gets, getNew's too: run again after a create-only commit failed. */
    private readonly readsAll = false,
  ) {
    super();
  }

  /**
   * Whether the turn took a key as absent without reading it (getNew): its transaction then
   * writes each key only where it is not there (sidecar.client.ts, saveState).
   */
  createsOnly = false;

  get actorType() {
    return this.a.type;
  }
  get actorId() {
    return this.a.id;
  }
  /** The pub/sub component's broker delivers: until handled where it redelivers (Redis Streams). */
  get deliversUntilHandled() {
    return this.runtime.brokerRedelivers;
  }

  async get<T>(key: string): Promise<T | undefined> {
    if (this.stateWrites.has(key)) return parsed<T>(this.stateWrites.get(key));
    return this.runtime.readState<T>(this.a, key);
  }

  /**
   * Absent, with no read, unless this host knows the actor's state (cached, or known whole) or
   * the turn runs again after its create-only commit failed: an admission's read of a new
   * message, one call to the sidecar fewer (3 at admission: the call, the hand-over's
   * publication and the transaction).
   */
  override async getNew<T>(key: string): Promise<T | undefined> {
    if (this.readsAll || this.stateWrites.has(key) || this.a.cache.has(key) || this.a.cacheWhole) return this.get<T>(key);
    this.createsOnly = true;
    return undefined;
  }

  set(key: string, value: unknown): void {
    // Kept as its JSON, as on the embedded runtime: what was set is what a later read returns.
    this.stateWrites.set(key, JSON.stringify(value));
  }

  delete(key: string): void {
    this.stateWrites.set(key, undefined);
  }

  get handedOver(): readonly Outgoing[] {
    return this.handOvers ?? [];
  }

  override handOver(topic: string, data: unknown): void {
    (this.handOvers ??= []).push({ topic, data });
  }

  get replayable(): readonly Outgoing[] {
    return this.replays ?? [];
  }

  override publishAgainOnReplay(topic: string, data: unknown): void {
    // Only a broker that redelivers stands for the outbox: elsewhere it is kept like any publication.
    if (this.deliversUntilHandled) (this.replays ??= []).push({ topic, data });
    else this.publish(topic, data);
  }

  invoke<R>(actorType: string, actorId: string, method: string, args?: unknown): Promise<R> {
    // Dapr actors are not reentrant here (and @dapr/dapr 3.18 does not support reentrancy):
    // a call back into an actor waiting on this turn would wait for its own caller's lock.
    // Refuse it at once instead of letting it hang until a deadline.
    if (this.chain.includes(`${actorType}/${actorId}`)) {
      return Promise.reject(new Error(`reentrant actor call refused: ${[...this.chain, `${actorType}/${actorId}`].join(' → ')}`));
    }
    return (async () => {
      this.stopIfCutOff();
      const value = await this.runtime.sidecar.invokeActor<R>(actorType, actorId, method, args, this.chain, this.cutOff?.signal);
      this.stopIfCutOff();
      return value;
    })();
  }

  /**
   * A turn whose call daprd gave up on stops at its next call to another actor, before doing
   * anything it would do with that call's answer (a delivery attempt: sending the mail). Its
   * caller has had an error and tries again, maybe on another host; a turn that went on here
   * would run beside that retry. It fails there like any turn that throws: it commits nothing,
   * unless the actor's code catches the error (a delivery attempt that has sent keeps its outcome
   * for a reminder to record).
   */
  private stopIfCutOff(): void {
    if (this.cutOff?.aborted) throw new Error(`the call to ${this.actorType}/${this.actorId} was cut off by daprd`);
  }
}
