// The embedded adapter of the runtime port: actors, reminders and pub/sub in one SQLite file.
// Activated actors keep their state in memory; every turn's writes go through the group
// committer, and a caller's `invoke` resolves only once what its turn wrote or read is on disk.
import { Fifo } from '../../lib/fifo.ts';
import { newId } from '../../lib/ids.ts';
import { fileURLToPath } from 'node:url';
import type { ActorDefinition, ActorRuntime, ActorTurn, Subscriber } from '../runtime.port.ts';
import { TurnRecorder } from '../turn.recorder.ts';
import { openSqlite, type Db } from '../../lib/sqlite.ts';
import { GroupCommitter } from '../../lib/committer.ts';
import { moduleBeside } from '../../lib/worker.ts';
import { encode, type EncodedWrites } from './committer.apply.ts';
import { ReminderClock, reminderKey, type DueReminder } from './reminders.ts';
import { OutboxDispatcher, type OutboxRow } from './outbox.ts';
import { PresenceFilter } from '../../lib/presence.filter.ts';

export interface EmbeddedRuntimeOptions {
  file: string;
  /** An activated actor idle this long is dropped from memory (its state stays on disk). */
  idleMs?: number;
  /** At most this many actors stay activated; the longest-activated idle ones go first. */
  maxActive?: number;
  /**
   * Idle actors keep at most this much state (its JSON text, in characters; default
   * DEFAULT_IDLE_STATE_CHARS) in memory after a sweep: over it, the longest-activated idle ones go,
   * however recently used.
   */
  maxIdleStateChars?: number;
  reminderConcurrency?: number;
  dispatchConcurrency?: number;
  /** Reminders due within this many ms are held in memory; later ones are loaded as time moves on. */
  reminderHorizonMs?: number;
  /** The write-ahead log goes back to its start once it holds more pages than this (default 4096, 16 MB). */
  walRestartFrames?: number;
  /** Turns enqueued in one tick go to the writer thread every this many (default 16), not all at its end. */
  postEvery?: number;
  log?: (message: string, error?: unknown) => void;
  /** Told each time sweeps have dropped another thousand actors from memory (lib/memory.ts collects then). */
  garbageLeft?: () => void;
}

const SETTLED: Promise<unknown> = Promise.resolve();

/**
 * 4 Mi characters: some 2,500 messages. A message's actor is used again within a second of its
 * admission (its capture or delivery), then seldom for minutes; what idle actors keep beyond that
 * is old generation the collector marks again and again. Against 32 Mi (bench/RESULTS.md,
 * thirty-eighth pass): bench:broadcast's peak 547 MiB (538 at 1 Mi) against 644-783; bench:send
 * as fast (medians 3,522 against 3,032 sends/s, in turns), 351-379 MiB after its burst against
 * 398-416.
 */
const DEFAULT_IDLE_STATE_CHARS = 4 * 1024 * 1024;

/** Sweeps that have dropped this many actors left enough garbage to be worth a collection (a burst's messages). */
const DROPS_WORTH_COLLECTING = 1000;

/** An actor's key in the presence filter: the same at start-up and for an activated actor. */
const presenceKeyOf = (type: string, id: string) => `${type}\0${id}`;

/** The state of an actor with none on disk: shared, until a turn of it writes. */
const NO_STATE: ReadonlyMap<string, string> = new Map();

class ActiveActor {
  /** Loaded on its first turn (NO_STATE if it has none); the turns' writes are applied to it. */
  state: ReadonlyMap<string, string> | null = null;
  /** The last turn queued on it, settled or not: the next one starts after it. */
  tail: Promise<unknown> = SETTLED;
  busy = 0;
  lastUsed = Date.now();
  /** Sequence of the last batch holding this actor's writes; it stays in memory until durable. */
  lastSeq = 0;
  /**
   * Reminder registrations its turns made while active (null: deleted); newer than the clock's.
   * Made on the first: most actors (a recipient checked, a message admitted) set none.
   */
  reminders: Map<string, { dueAt: number; data: string | null } | null> | null = null;
  /** Reminders that came due and wait to fire; the actor stays in memory until they have. */
  pendingFirings = 0;
  private presenceKey: string | null = null;
  /** Known to be in the presence filter (keys are never taken out): a write need not add it again. */
  inFilter = false;
  constructor(
    readonly type: string,
    readonly id: string,
  ) {}

  /**
   * How much state it holds in memory: its keys' and values' characters, kept as the state is
   * loaded and written. The sweep reads it for every idle actor each second: summed there, over
   * the 15,000-50,000 actors a broadcast's fan-out keeps, it took about 2.5 s of the event loop in
   * a profiled bench:broadcast (bench/RESULTS.md, thirty-seventh pass).
   */
  stateChars = 0;

  /** Sets `key` of its own state (not NO_STATE) to `value`, or deletes it (null), keeping stateChars. */
  write(state: Map<string, string>, key: string, value: string | null): void {
    const old = state.get(key);
    if (old !== undefined) this.stateChars -= key.length + old.length;
    if (value === null) state.delete(key);
    else {
      state.set(key, value);
      this.stateChars += key.length + value.length;
    }
  }

  /** Its key in the presence filter, made when first needed. */
  get key(): string {
    return (this.presenceKey ??= presenceKeyOf(this.type, this.id));
  }
}

/**
 * Every actor with state in the file, read once at start: the filter is told of each actor a turn
 * writes state for when the write is queued, before a later activation can ask, so activating an
 * actor it answers "no" for (every new message, its delivery) reads nothing.
 */
function presenceOnDisk(db: Db): PresenceFilter {
  const rows = (db.prepare('SELECT COUNT(*) AS n FROM actor_state').get() as { n: number }).n;
  const filter = new PresenceFilter(rows * 2);
  const actors = db.prepare('SELECT DISTINCT actor_type, actor_id FROM actor_state').raw();
  for (const [type, id] of actors.iterate() as Iterable<[string, string]>) filter.add(presenceKeyOf(type, id));
  return filter;
}

/** The store's schema, applied on open. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

const reminderRetryMs = (attempt: number) => Math.min(60_000, 1000 * 2 ** Math.min(attempt, 6));

export class EmbeddedRuntime implements ActorRuntime {
  private readonly db: Db;
  private readonly committer: GroupCommitter;
  private readonly clock: ReminderClock;
  private readonly outbox: OutboxDispatcher;
  private readonly definitions = new Map<string, ActorDefinition>();
  /** Activated actors by type, then id (in activation order): found several times a send without building a key. */
  private readonly active = new Map<string, Map<string, ActiveActor>>();
  private activeCount = 0;
  private readonly loadState;
  /** Actors that may have state on disk; the others are activated without a SELECT. */
  private readonly present: PresenceFilter;
  private readonly log: (message: string, error?: unknown) => void;
  private readonly garbageLeft: () => void;
  private droppedSinceTold = 0;
  private readonly idleMs: number;
  private readonly maxActive: number;
  private readonly maxIdleStateChars: number;
  private readonly reminderConcurrency: number;
  private readonly reminderQueue = new Fifo<{ reminder: DueReminder; a: ActiveActor }>();
  private readonly reminderAttempts = new Map<string, number>();
  private remindersRunning = 0;
  private outboxSeq: number;
  private sweeper: NodeJS.Timeout | null = null;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  /** While stopping: what stop() waits for to finish (running subscribers, firings, turns). */
  private draining: 'subscribers' | 'reminders' | 'turns' | null = null;
  private stopping: Promise<void> | null = null;

  constructor(opts: EmbeddedRuntimeOptions) {
    this.db = openSqlite(opts.file, MIGRATIONS_DIR);
    this.log = opts.log ?? ((m, e) => console.error(m, e ?? ''));
    this.garbageLeft = opts.garbageLeft ?? (() => {});
    this.idleMs = opts.idleMs ?? 30_000;
    this.maxActive = opts.maxActive ?? 50_000;
    this.maxIdleStateChars = opts.maxIdleStateChars ?? DEFAULT_IDLE_STATE_CHARS;
    this.reminderConcurrency = opts.reminderConcurrency ?? 256;
    this.committer = new GroupCommitter(
      opts.file,
      moduleBeside(import.meta.url, 'committer.apply'),
      (error) => {
        this.log('fatal: the actor store could not commit; stopping', error);
        process.exitCode = 1;
        void this.stop();
      },
      { walRestartFrames: opts.walRestartFrames, postEvery: opts.postEvery },
    );
    this.clock = new ReminderClock(this.db, (r) => this.queueReminder(r), opts.reminderHorizonMs);
    this.outbox = new OutboxDispatcher(
      (seq) => this.committer.enqueue(encode.outboxDone([], seq)),
      (row, error) => this.log(`subscriber of ${row.topic} failed; will retry`, error),
      opts.dispatchConcurrency ?? 64,
    );
    this.loadState = this.db.prepare('SELECT key, value FROM actor_state WHERE actor_type = ? AND actor_id = ?');
    this.present = presenceOnDisk(this.db);
    this.outboxSeq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS m FROM outbox').get() as { m: number }).m;
  }

  register(definition: ActorDefinition): void {
    if (this.definitions.has(definition.type)) throw new Error(`actor type ${definition.type} is already registered`);
    this.definitions.set(definition.type, definition);
  }

  subscribe(topic: string, subscriber: Subscriber): void {
    this.outbox.subscribe(topic, subscriber);
  }

  async start(): Promise<void> {
    await this.committer.ready;
    this.state = 'running';
    this.clock.start();
    this.outbox.start(this.db);
    this.sweeper = setInterval(() => this.sweep(), 1000);
    this.sweeper.unref();
  }

  /** Every caller, not just the first, waits until the runtime has stopped. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    this.state = 'stopping';
    this.clock.stop();
    if (this.sweeper) clearInterval(this.sweeper);
    this.draining = 'subscribers';
    await this.outbox.stop();
    this.draining = 'reminders';
    while (this.remindersRunning > 0) await new Promise((r) => setTimeout(r, 10));
    // A running turn may still call other actors while we stop: wait until no turn is left.
    this.draining = 'turns';
    for (let busy = this.busyActors(); busy.length > 0; busy = this.busyActors()) {
      await Promise.allSettled(busy.map((a) => a.tail));
    }
    this.draining = null;
    await this.committer.close();
    this.db.close();
    this.state = 'stopped';
  }

  async invoke<R>(actorType: string, actorId: string, method: string, args?: unknown): Promise<R> {
    const reads: ReadSink = { readSeq: 0 };
    try {
      return await this.call<R>(actorType, actorId, method, args, reads);
    } finally {
      // Everything this turn and the turns it called wrote or read is on disk before we answer,
      // errors included: a refusal may rest on state an earlier turn wrote ("key already used").
      // Writes of turns it did not read wait for no one (a capture reading a committed message).
      await this.committer.durable(reads.readSeq);
    }
  }

  /** An outbox row of no actor's turn, committed in the next group like a turn's publication. */
  async publish(topic: string, data: unknown): Promise<void> {
    if (this.state !== 'running') throw new Error('the actor runtime is not running');
    if (!this.outbox.subscribes(topic)) return;
    const row = { seq: ++this.outboxSeq, id: newId('pub'), topic, data };
    const seq = this.committer.enqueue(encode.outbox([], row.seq, row.id, row.topic, JSON.stringify(data)), () =>
      this.outbox.add(row),
    );
    await this.committer.durable(seq);
  }

  /**
   * Activated actors, reminders held in memory, undispatched outbox rows, groups committed, and
   * what a stop() under way waits for: for tests and benchmarks.
   */
  stats() {
    return {
      draining: this.draining,
      active: this.activeCount,
      reminders: this.clock.pending,
      outbox: this.outbox.backlog,
      committedGroups: this.committer.committedGroups,
    };
  }

  /** A turn: runs `body` alone on the actor, then enqueues its writes. Does not wait for the commit. */
  private turn<R>(
    actorType: string,
    actorId: string,
    body: (def: ActorDefinition, turn: EmbeddedTurn) => Promise<R>,
    reads: ReadSink | null = null,
  ): Promise<R> {
    // While stopping, what was already under way (a running turn, a subscriber, a firing) may
    // still call actors; nothing new starts, since the clock and the outbox are stopped first.
    if (this.state !== 'running' && this.state !== 'stopping') {
      return Promise.reject(new Error('the actor runtime is not running'));
    }
    const def = this.definitions.get(actorType);
    if (!def) return Promise.reject(new Error(`unknown actor type ${actorType}`));
    const a = this.activate(actorType, actorId);
    const ahead = a.busy > 0;
    a.busy++;
    // Nothing running or queued on it: the turn starts now, not a microtask later. Otherwise it
    // starts once the last one queued has settled, whatever its outcome.
    const run = ahead
      ? a.tail.then(
          () => this.runTurn(a, def, body, reads),
          () => this.runTurn(a, def, body, reads),
        )
      : this.runTurn(a, def, body, reads);
    a.tail = run;
    return run;
  }

  private async runTurn<R>(
    a: ActiveActor,
    def: ActorDefinition,
    body: (def: ActorDefinition, turn: EmbeddedTurn) => Promise<R>,
    reads: ReadSink | null,
  ): Promise<R> {
    const turn = new EmbeddedTurn(this, a);
    try {
      const result = await body(def, turn);
      this.commitTurn(a, turn);
      return result;
    } finally {
      // The actor's last write (this turn's, or one this turn read), and whatever its own calls read.
      if (reads) reads.readSeq = Math.max(reads.readSeq, a.lastSeq, turn.readSeq);
      a.busy--;
      a.lastUsed = Date.now();
      if (this.holdsNothing(a)) this.deactivate(a);
    }
  }

  private call<R>(actorType: string, actorId: string, method: string, args: unknown, reads: ReadSink): Promise<R> {
    return this.turn<R>(
      actorType,
      actorId,
      (def, turn) => {
        const fn = def.methods[method];
        if (!fn) throw new Error(`actor type ${actorType} has no method ${method}`);
        return fn(turn, args);
      },
      reads,
    );
  }

  /**
   * A call from inside a turn: ordered commits make waiting for its durability unnecessary, but
   * what it read is the calling turn's to wait for, if that turn answers an outside caller.
   */
  invokeNested<R>(caller: ReadSink, actorType: string, actorId: string, method: string, args?: unknown): Promise<R> {
    return this.call<R>(actorType, actorId, method, args, caller);
  }

  /**
   * An idle actor with no state, no reminder and no write on its way to disk: keeping it in memory
   * saves nothing, and most such turns are checks of actors that never had state (a recipient
   * nobody suppressed, one for every address sent to), which would push out actors that have.
   */
  private holdsNothing(a: ActiveActor): boolean {
    return (
      this.isIdle(a, this.committer.durableHead) &&
      (a.reminders === null || a.reminders.size === 0) &&
      (a.state === null || a.state.size === 0)
    );
  }

  /** No turn running or waiting to fire, and every write it made is on disk: it may leave memory. */
  private isIdle(a: ActiveActor, durableHead: number): boolean {
    return a.busy === 0 && a.pendingFirings === 0 && a.lastSeq <= durableHead;
  }

  private busyActors(): ActiveActor[] {
    return [...this.activeActors()].filter((a) => a.busy > 0);
  }

  loadActorState(a: ActiveActor): ReadonlyMap<string, string> {
    if (!a.state) {
      a.inFilter = this.present.mayHave(a.key);
      if (!a.inFilter) {
        a.state = NO_STATE;
      } else {
        const rows = this.loadState.all(a.type, a.id) as { key: string; value: string }[];
        a.state = new Map(rows.map((r) => [r.key, r.value]));
        for (const r of rows) a.stateChars += r.key.length + r.value.length;
      }
    }
    return a.state;
  }

  private activate(type: string, id: string): ActiveActor {
    let byId = this.active.get(type);
    if (!byId) this.active.set(type, (byId = new Map()));
    let a = byId.get(id);
    if (!a) {
      a = new ActiveActor(type, id);
      byId.set(id, a);
      this.activeCount++;
    }
    return a;
  }

  private deactivate(a: ActiveActor): void {
    const byId = this.active.get(a.type)!;
    if (byId.get(a.id) !== a) return;
    byId.delete(a.id);
    this.activeCount--;
  }

  private *activeActors(): Iterable<ActiveActor> {
    for (const byId of this.active.values()) yield* byId.values();
  }

  private commitTurn(a: ActiveActor, turn: EmbeddedTurn): void {
    // A turn that only read (most nested calls) has nothing to commit.
    if (turn.stateWrites.size === 0 && turn.reminderWrites.size === 0 && turn.published.length === 0) return;
    const writes: EncodedWrites = [];
    if (turn.stateWrites.size > 0) {
      // Every state but the shared NO_STATE is a Map of this actor's own.
      const loaded = this.loadActorState(a);
      const cache = loaded === NO_STATE ? (a.state = new Map<string, string>()) : (loaded as Map<string, string>);
      // Before the write is even queued: from here on, activating this actor reads the disk.
      if (!a.inFilter) {
        this.present.add(a.key);
        a.inFilter = true;
      }
      for (const [key, value] of turn.stateWrites) {
        encode.state(writes, a.type, a.id, key, value);
        a.write(cache, key, value);
      }
    }
    const reminders: ({ set: DueReminder } | { del: { actorType: string; actorId: string; name: string } })[] = [];
    for (const [name, r] of turn.reminderWrites) {
      const registered = (a.reminders ??= new Map());
      if (r === null) {
        registered.set(name, null);
        encode.reminderDelete(writes, a.type, a.id, name);
        reminders.push({ del: { actorType: a.type, actorId: a.id, name } });
      } else {
        const data = r.data === undefined ? null : JSON.stringify(r.data);
        registered.set(name, { dueAt: r.dueAt, data });
        encode.reminder(writes, a.type, a.id, name, r.dueAt, data);
        reminders.push({ set: { actorType: a.type, actorId: a.id, name, dueAt: r.dueAt, data } });
      }
    }
    const rows: OutboxRow[] = [];
    for (const p of turn.published) {
      if (!this.outbox.subscribes(p.topic)) continue;
      const row = { seq: ++this.outboxSeq, id: newId('pub'), topic: p.topic, data: p.data };
      rows.push(row);
      encode.outbox(writes, row.seq, row.id, row.topic, JSON.stringify(p.data));
    }
    if (writes.length === 0) return;
    a.lastSeq = this.committer.enqueue(writes, () => {
      for (const r of reminders) {
        if ('set' in r) this.clock.set(r.set);
        else this.clock.delete(r.del);
      }
      for (const row of rows) this.outbox.add(row);
    });
  }

  private queueReminder(r: DueReminder): void {
    const a = this.activate(r.actorType, r.actorId);
    a.pendingFirings++;
    this.reminderQueue.push({ reminder: r, a });
    this.pumpReminders();
  }

  private pumpReminders(): void {
    while (this.state === 'running' && this.remindersRunning < this.reminderConcurrency && this.reminderQueue.length) {
      const { reminder: r, a } = this.reminderQueue.shift()!;
      this.remindersRunning++;
      const key = reminderKey(r);
      this.fireReminder(r, a)
        .then(
          () => this.reminderAttempts.delete(key),
          (error) => {
            const attempt = (this.reminderAttempts.get(key) ?? 0) + 1;
            this.reminderAttempts.set(key, attempt);
            this.log(`reminder ${r.name} of ${r.actorType}/${r.actorId} failed; will retry`, error);
            this.clock.retry({ ...r, dueAt: Date.now() + reminderRetryMs(attempt) });
          },
        )
        .finally(() => {
          a.pendingFirings--;
          this.remindersRunning--;
          this.pumpReminders();
        });
    }
  }

  private fireReminder(r: DueReminder, a: ActiveActor): Promise<void> {
    return this.turn(r.actorType, r.actorId, async (def, turn) => {
      // Turns that ran on this actor since the reminder came due may have moved or deleted it;
      // the actor holds what they did (it stays in memory while a firing waits). Fire what is
      // current, if it is still due (a retry's dueAt is later than the registration's).
      const current = a.reminders?.has(r.name) ? a.reminders.get(r.name)! : { dueAt: r.dueAt, data: r.data };
      if (!current || current.dueAt > r.dueAt) return;
      // One-shot: the firing turn removes the reminder, unless it sets it again.
      turn.deleteReminder(r.name);
      if (!def.onReminder) throw new Error(`actor type ${r.actorType} has no reminder handler`);
      await def.onReminder(turn, r.name, current.data === null ? undefined : JSON.parse(current.data));
    });
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    const durable = this.committer.durableHead;
    let excess = this.activeCount - this.maxActive;
    // Each type's actors are in activation order: over the limit, the longest-activated idle
    // actors go first, type by type (a hot one dropped here costs one reload from disk).
    const kept: ActiveActor[] = [];
    const before = this.activeCount;
    let chars = 0;
    for (const a of this.activeActors()) {
      if (!this.isIdle(a, durable)) continue;
      if (a.lastUsed < cutoff || excess > 0) {
        this.deactivate(a);
        excess--;
      } else {
        kept.push(a);
        chars += a.stateChars;
      }
    }
    // Many actors used once each (a broadcast's messages, each admitted and captured, then idle
    // until its retention ends) would otherwise stay idleMs each: bench:broadcast held 50,000 of
    // them (maxActive), most of its peak resident memory.
    for (const a of kept) {
      if (chars <= this.maxIdleStateChars) break;
      chars -= a.stateChars;
      this.deactivate(a);
    }
    this.droppedSinceTold += before - this.activeCount;
    if (this.droppedSinceTold >= DROPS_WORTH_COLLECTING) {
      this.droppedSinceTold = 0;
      this.garbageLeft();
    }
  }
}

/**
 * Collects the sequence of the last write a turn, and the turns it called, wrote or read: once
 * that is durable, nothing the turn answers can be lost in a crash.
 */
interface ReadSink {
  readSeq: number;
}

const NO_STATE_WRITES: ReadonlyMap<string, string | null> = new Map();

class EmbeddedTurn extends TurnRecorder implements ActorTurn, ReadSink {
  /** Key → its new value (JSON), or null to delete it; made on the first write. */
  private writes: Map<string, string | null> | null = null;
  readSeq = 0;

  constructor(
    private readonly runtime: EmbeddedRuntime,
    private readonly a: ActiveActor,
  ) {
    super();
  }

  get actorType() {
    return this.a.type;
  }
  get actorId() {
    return this.a.id;
  }
  /** The outbox keeps a publication until each subscriber has returned from it. */
  get deliversUntilHandled() {
    return true;
  }

  get stateWrites(): ReadonlyMap<string, string | null> {
    return this.writes ?? NO_STATE_WRITES;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const raw = this.writes?.has(key) ? this.writes.get(key) : this.runtime.loadActorState(this.a).get(key);
    // Parsed afresh on every read, so no caller can mutate the cached state behind the runtime's back.
    return raw == null ? undefined : (JSON.parse(raw) as T);
  }

  set(key: string, value: unknown): void {
    (this.writes ??= new Map()).set(key, JSON.stringify(value));
  }

  delete(key: string): void {
    (this.writes ??= new Map()).set(key, null);
  }

  invoke<R>(actorType: string, actorId: string, method: string, args?: unknown): Promise<R> {
    return this.runtime.invokeNested<R>(this, actorType, actorId, method, args);
  }
}
