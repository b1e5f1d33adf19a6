// The embedded runtime keeps the port's promises (runtime/runtime.port.ts): turns, atomicity,
// durability, group commit, nested calls, eviction and stop. Reminders and pub/sub have files of
// their own beside this one.
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { actor, defineActor, type ActorTurn, type Delivery } from '../runtime.port.ts';
import type { EmbeddedRuntime } from './runtime.sqlite.ts';
import { deferred } from '../../lib/deferred.ts';
import { eventually, harness, sleep, type Harness } from './runtime.sqlite.testkit.ts';

let h: Harness;
beforeEach(() => {
  h = harness();
});
afterEach(async () => {
  await h.cleanup();
});

/** Turns currently inside a method of `counter`, across all its ids, and the most seen at once. */
const inFlight = { now: 0, max: 0 };

const counter = defineActor({
  type: 'counter',
  methods: {
    /** Read, yield to the event loop, write: loses updates unless turns are exclusive. */
    async slowIncrement(turn: ActorTurn, _args: undefined) {
      inFlight.now++;
      inFlight.max = Math.max(inFlight.max, inFlight.now);
      try {
        const n = (await turn.get<number>('n')) ?? 0;
        await sleep(5);
        turn.set('n', n + 1);
        return n + 1;
      } finally {
        inFlight.now--;
      }
    },
    async get(turn: ActorTurn, _args: undefined) {
      return (await turn.get<number>('n')) ?? 0;
    },
    async set(turn: ActorTurn, n: number) {
      turn.set('n', n);
    },
  },
});

describe('one turn at a time per actor', () => {
  beforeEach(() => {
    inFlight.now = 0;
    inFlight.max = 0;
  });

  it('never interleaves concurrent invokes on one actor', async () => {
    const rt = await h.start({ actors: [counter] });
    const n = 20;
    const results = await Promise.all(Array.from({ length: n }, () => actor(rt, counter, 'c1').slowIncrement(undefined)));
    expect(inFlight.max).toBe(1);
    expect(await actor(rt, counter, 'c1').get(undefined)).toBe(n);
    // Every turn saw the one before it: each answer is distinct, 1..n.
    expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  });

  it('runs turns of different actors concurrently', async () => {
    const rt = await h.start({ actors: [counter] });
    const ids = ['a', 'b', 'c', 'd', 'e'];
    await Promise.all(ids.map((id) => actor(rt, counter, id).slowIncrement(undefined)));
    expect(inFlight.max).toBe(ids.length);
    for (const id of ids) expect(await actor(rt, counter, id).get(undefined)).toBe(1);
  });
});

describe('atomic turns', () => {
  const fired: unknown[] = [];
  const delivered: Delivery[] = [];
  const doomed = defineActor({
    type: 'doomed',
    methods: {
      async failAfterWriting(turn: ActorTurn, _args: undefined) {
        turn.set('n', 99);
        turn.delete('keep');
        turn.setReminder('doomed', Date.now(), { from: 'failed turn' });
        turn.publish('events', { from: 'failed turn' });
        throw new GatepostError('quota_exceeded', 'no more today');
      },
      /** A turn that succeeds, with a reminder and a publication that follow the failed ones. */
      async succeed(turn: ActorTurn, _args: undefined) {
        turn.set('n', ((await turn.get<number>('n')) ?? 0) + 1);
        turn.setReminder('ok', Date.now(), { from: 'good turn' });
        turn.publish('events', { from: 'good turn' });
      },
      async read(turn: ActorTurn, _args: undefined) {
        return { n: await turn.get<number>('n'), keep: await turn.get<string>('keep') };
      },
      async init(turn: ActorTurn, _args: undefined) {
        turn.set('n', 1);
        turn.set('keep', 'me');
      },
    },
    async onReminder(_turn, name, data) {
      fired.push({ name, data });
    },
  });

  it('a turn that throws saves nothing and its coded error reaches the caller', async () => {
    fired.length = 0;
    delivered.length = 0;
    const rt = await h.start({
      actors: [doomed],
      subscribers: { events: async (d) => void delivered.push(d) },
    });
    const d = actor(rt, doomed, 'd1');
    await d.init(undefined);

    const error = await d.failAfterWriting(undefined).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GatepostError);
    expect(error).toMatchObject({ code: 'quota_exceeded', message: 'no more today' });

    // Neither the cached nor the stored state changed.
    expect(await d.read(undefined)).toEqual({ n: 1, keep: 'me' });
    expect(h.stateOnDisk('doomed', 'd1', 'n')).toBe(1);
    expect(h.read((db) => db.prepare('SELECT COUNT(*) AS c FROM reminders').get())).toEqual({ c: 0 });
    expect(h.read((db) => db.prepare('SELECT COUNT(*) AS c FROM outbox').get())).toEqual({ c: 0 });

    // A good turn after it: its reminder and message come through, the failed turn's never do
    // (the failed ones were due first and published first, so they would have come first).
    await d.succeed(undefined);
    await eventually(() => expect(fired).toEqual([{ name: 'ok', data: { from: 'good turn' } }]));
    await eventually(() => expect(delivered.map((x) => x.data)).toEqual([{ from: 'good turn' }]));
    expect(await d.read(undefined)).toEqual({ n: 2, keep: 'me' });
  });
});

const box = defineActor({
  type: 'box',
  methods: {
    async put(turn: ActorTurn, args: { key: string; value: unknown }) {
      turn.set(args.key, args.value);
    },
    async take(turn: ActorTurn, key: string) {
      return turn.get<unknown>(key);
    },
    /** Says when its turn runs: after every turn queued ahead of it on the actor has run. */
    async mark(_turn: ActorTurn, ran: () => void) {
      ran();
    },
    /** Reads an object and changes it in place without `set`: must not reach stored state. */
    async mutateWithoutSet(turn: ActorTurn, key: string) {
      const value = await turn.get<{ items: string[] }>(key);
      value!.items.push('mutated in turn');
      return value;
    },
    /** Sets an object, then changes it: the value saved is the one at `set`. */
    async setThenMutate(turn: ActorTurn, key: string) {
      const value = { items: ['at set'] };
      turn.set(key, value);
      value.items.push('after set');
      return turn.get<{ items: string[] }>(key);
    },
  },
});

/** Reads a box's `k` through a call of its own: what the box's turn read, this turn's answer waits for. */
const peeker = defineActor({
  type: 'peeker',
  methods: {
    async peek(turn: ActorTurn, boxId: string) {
      return actor(turn, box, boxId).take('k');
    },
    async mark(_turn: ActorTurn, ran: () => void) {
      ran();
    },
  },
});

describe('durability before the answer', () => {
  it('the write is on disk, seen by a second connection, when invoke resolves', async () => {
    const rt = await h.start({ actors: [box] });
    // Several writes in a row: each one must be visible the moment its invoke resolves.
    for (let i = 0; i < 5; i++) {
      await actor(rt, box, 'b1').put({ key: 'k', value: { i } });
      expect(h.stateOnDisk('box', 'b1', 'k')).toEqual({ i });
    }
  });

  it('an answer waits for the writes it read, and only for them', async () => {
    const rt = await h.start({ actors: [box, peeker] });
    await actor(rt, box, 'b1').put({ key: 'k', value: 1 });
    // While another connection holds the write lock, nothing new can become durable.
    const lock = new Database(h.file);
    lock.exec('BEGIN IMMEDIATE');
    let putAnswered = false;
    const put = actor(rt, box, 'b2')
      .put({ key: 'k', value: 2 })
      .then(() => (putAnswered = true));
    const answered: string[] = [];
    const readOfPut = actor(rt, box, 'b2')
      .take('k')
      .then((v) => (answered.push('b2'), v));
    const nestedReadOfPut = actor(rt, peeker, 'p1')
      .peek('b2')
      .then((v) => (answered.push('p1'), v));
    // The positive signal: turns queued behind those on b2 and p1 have run, so those turns are
    // over, and after one more round of the event loop any answer not held for the disk is out.
    const ranOnB2 = deferred();
    const ranOnP1 = deferred();
    const marks = [actor(rt, box, 'b2').mark(ranOnB2.resolve), actor(rt, peeker, 'p1').mark(ranOnP1.resolve)];
    try {
      // b1's state is durable: reading it waits for no one, although b2's write is still pending.
      expect(await actor(rt, box, 'b1').take('k')).toBe(1);
      await Promise.all([ranOnB2.promise, ranOnP1.promise]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(putAnswered).toBe(false);
      // Reading b2, directly or through another actor, waits until its write is durable.
      expect(answered).toEqual([]);
    } finally {
      lock.exec('COMMIT');
      lock.close();
    }
    expect(await readOfPut).toBe(2);
    expect(await nestedReadOfPut).toBe(2);
    await Promise.all([put, ...marks]);
    expect(h.stateOnDisk('box', 'b2', 'k')).toBe(2);
  });

  it('state survives stop and a new runtime on the same file', async () => {
    const rt1 = await h.start({ actors: [box] });
    await actor(rt1, box, 'b1').put({ key: 'k', value: { hello: ['world'] } });
    await actor(rt1, box, 'b2').put({ key: 'gone', value: 1 });
    await rt1.stop();

    const rt2 = await h.start({ actors: [box] });
    expect(await actor(rt2, box, 'b1').take('k')).toEqual({ hello: ['world'] });
    expect(await actor(rt2, box, 'b2').take('gone')).toBe(1);
  });

  it('state read is a copy: mutating it, in or out of the turn, does not change stored state', async () => {
    const rt = await h.start({ actors: [box] });
    const b = actor(rt, box, 'b1');
    await b.put({ key: 'obj', value: { items: ['original'] } });

    const outside = (await b.take('obj')) as { items: string[] };
    outside.items.push('mutated by caller');
    expect(await b.mutateWithoutSet('obj')).toEqual({ items: ['original', 'mutated in turn'] });
    expect(await b.take('obj')).toEqual({ items: ['original'] });

    expect(await b.setThenMutate('obj2')).toEqual({ items: ['at set'] });
    expect(await b.take('obj2')).toEqual({ items: ['at set'] });
    expect(h.stateOnDisk('box', 'b1', 'obj2')).toEqual({ items: ['at set'] });
  });
});

/** Counts the groups the writer thread commits (one transaction and one fsync each) from now on. */
function countTransactions(rt: EmbeddedRuntime) {
  const start = rt.stats().committedGroups;
  return {
    get commits() {
      return rt.stats().committedGroups - start;
    },
  };
}

describe('group commit', () => {
  it('commits many concurrent turns on different actors in fewer transactions than turns', async () => {
    // Posted together at the tick's end (postEvery above the tick's turns).
    const rt = await h.start({ actors: [box], options: { postEvery: 1000 } });
    await actor(rt, box, 'warm').put({ key: 'k', value: 0 });
    const tx = countTransactions(rt);

    const n = 50;
    await Promise.all(Array.from({ length: n }, (_, i) => actor(rt, box, `g${i}`).put({ key: 'k', value: i })));
    // All n turns ended in one tick: they share a transaction (and its fsync).
    expect(tx.commits).toBeGreaterThanOrEqual(1);
    expect(tx.commits).toBeLessThanOrEqual(2);
    const onDisk = h.read(
      (db) =>
        db.prepare("SELECT COUNT(*) AS c FROM actor_state WHERE actor_type = 'box' AND actor_id LIKE 'g%'").get() as {
          c: number;
        },
    );
    expect(onDisk.c).toBe(n);
  });

  it('the wrapper would see one transaction per turn if turns were committed one by one', async () => {
    // The observable can fail: sequential invokes each wait for their own commit.
    const rt = await h.start({ actors: [box] });
    await actor(rt, box, 'warm').put({ key: 'k', value: 0 });
    const tx = countTransactions(rt);
    for (let i = 0; i < 5; i++) await actor(rt, box, `s${i}`).put({ key: 'k', value: i });
    expect(tx.commits).toBe(5);
  });
});

describe('checkpoints', () => {
  it('copies the write-ahead log into the database file while running, on a thread of their own', async () => {
    const rt = await h.start({ actors: [box] });
    const fileSize = () => statSync(h.file).size;
    const before = fileSize();
    // About 2 MB of state: half of what one automatic checkpoint would wait for, which the
    // writer no longer runs anyway.
    const value = 'x'.repeat(4000);
    await Promise.all(Array.from({ length: 500 }, (_, i) => actor(rt, box, `c${i}`).put({ key: 'k', value })));
    await eventually(() => fileSize() > before + 1_500_000);
  });

  it('keeps the write-ahead log short under steady load, starting it again from its beginning', async () => {
    const rt = await h.start({ actors: [box], options: { walRestartFrames: 64 } });
    const value = 'w'.repeat(2000);
    let written = 0;
    // Commits back to back for a while, so that no moment comes with the whole log copied back.
    for (const until = Date.now() + 2500; Date.now() < until;) {
      await Promise.all(Array.from({ length: 32 }, () => actor(rt, box, `w${written++}`).put({ key: 'k', value })));
    }
    // Every value went through the log; one never started again would be at least this long.
    expect(statSync(`${h.file}-wal`).size).toBeLessThan((written * value.length) / 2);
  });
});

describe('the store file', () => {
  it('stores values the size of a message record without an overflow page each', async () => {
    const rt = await h.start({ actors: [box] });
    const value = 'r'.repeat(1200);
    await Promise.all(Array.from({ length: 2000 }, (_, i) => actor(rt, box, `r${i}`).put({ key: 'record', value })));
    await rt.stop();
    const pages = h.read((db) => db.prepare("SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name = 'actor_state'").get()) as {
      bytes: number;
    };
    // 2.4 MB of values; with a 4 KB overflow page each they took about 10 MB.
    expect(pages.bytes).toBeLessThan(2000 * 1200 * 1.5);
  });
});

describe('nested invokes', () => {
  const outer = defineActor({
    type: 'outer',
    methods: {
      async relay(turn: ActorTurn, args: { to: string; value: number }) {
        const before = await actor(turn, box, args.to).take('v');
        await actor(turn, box, args.to).put({ key: 'v', value: args.value });
        turn.set('relayed', args.value);
        return { before, after: await actor(turn, box, args.to).take('v') };
      },
    },
  });

  it("an actor can call another inside its turn, and the callee's write is durable when the outer invoke resolves", async () => {
    const rt = await h.start({ actors: [outer, box] });
    expect(await actor(rt, outer, 'o1').relay({ to: 'inner', value: 7 })).toEqual({ before: undefined, after: 7 });
    expect(h.stateOnDisk('box', 'inner', 'v')).toBe(7);
    expect(h.stateOnDisk('outer', 'o1', 'relayed')).toBe(7);
    expect(await actor(rt, box, 'inner').take('v')).toBe(7);
  });
});

describe('eviction', () => {
  it('actors dropped after idleMs reload their state from disk', async () => {
    const rt = await h.start({ actors: [counter], options: { idleMs: 10 } });
    for (const [i, id] of ['x', 'y', 'z'].entries()) await actor(rt, counter, id).set(i + 10);
    await eventually(() => expect(rt.stats().active).toBe(0), 5000);
    for (const [i, id] of ['x', 'y', 'z'].entries()) expect(await actor(rt, counter, id).get(undefined)).toBe(i + 10);
    // And once reloaded, they keep working on top of what they loaded.
    await actor(rt, counter, 'x').slowIncrement(undefined);
    await eventually(() => expect(rt.stats().active).toBe(0), 5000);
    expect(await actor(rt, counter, 'x').get(undefined)).toBe(11);
  });

  it('an actor with nothing to keep (no state, no reminder) leaves memory after its turn; one with state stays', async () => {
    const rt = await h.start({ actors: [counter] });
    await Promise.all(Array.from({ length: 100 }, (_, i) => actor(rt, counter, `empty${i}`).get(undefined)));
    expect(rt.stats().active).toBe(0);
    await actor(rt, counter, 'kept').set(5);
    expect(rt.stats().active).toBe(1);
    // Calls queued on one actor are still one at a time, and see each other's writes.
    const runs = await Promise.all([1, 2, 3].map(() => actor(rt, counter, 'fresh').slowIncrement(undefined)));
    expect(runs.sort()).toEqual([1, 2, 3]);
    expect(await actor(rt, counter, 'kept').get(undefined)).toBe(5);
  });

  it('beyond maxIdleStateChars of idle state, the longest-activated idle actors are dropped and reload correctly', async () => {
    // Each counter's state is its key and a number: 'n' and '0'..'5', two characters.
    const rt = await h.start({ actors: [counter], options: { maxIdleStateChars: 6 } });
    const ids = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'];
    for (const [i, id] of ids.entries()) await actor(rt, counter, id).set(i);
    await eventually(() => expect(rt.stats().active).toBeLessThanOrEqual(3), 5000);
    for (const [i, id] of ids.entries()) expect(await actor(rt, counter, id).get(undefined)).toBe(i);
  });

  it('counts the state of an idle actor once, however often it was written', async () => {
    // Four counters of two characters each, over the limit of six: one is dropped, three stay.
    // Counted at every write, each would hold ten characters and the sweep would drop all four.
    const rt = await h.start({ actors: [counter], options: { maxIdleStateChars: 6 } });
    const ids = ['w0', 'w1', 'w2', 'w3'];
    for (const id of ids) for (let n = 0; n < 5; n++) await actor(rt, counter, id).set(n);
    await eventually(() => expect(rt.stats().active).toBeLessThanOrEqual(3), 5000);
    expect(rt.stats().active).toBe(3);
    expect(await actor(rt, counter, 'w0').get(undefined)).toBe(4);
  });

  it('beyond maxActive, the least recently used actors are dropped and reload correctly', async () => {
    const rt = await h.start({ actors: [counter], options: { maxActive: 2 } });
    const ids = ['m0', 'm1', 'm2', 'm3', 'm4', 'm5'];
    for (const [i, id] of ids.entries()) await actor(rt, counter, id).set(i);
    await eventually(() => expect(rt.stats().active).toBeLessThanOrEqual(2), 5000);
    for (const [i, id] of ids.entries()) expect(await actor(rt, counter, id).get(undefined)).toBe(i);
  });
  it('tells garbageLeft once sweeps have dropped a thousand actors (a burst), not for a few', async () => {
    let told = 0;
    const rt = await h.start({ actors: [counter], options: { idleMs: 10, garbageLeft: () => told++ } });
    for (const id of ['a', 'b', 'c']) await actor(rt, counter, id).set(1);
    await eventually(() => expect(rt.stats().active).toBe(0), 5000);
    expect(told).toBe(0);
    await Promise.all(Array.from({ length: 1000 }, (_, i) => actor(rt, counter, `burst${i}`).set(i)));
    await eventually(() => expect(rt.stats().active).toBe(0), 5000);
    expect(told).toBe(1);
  });
});

describe('stop()', () => {
  const slow = defineActor({
    type: 'slow',
    methods: {
      async writeWhenReleased(turn: ActorTurn, args: { entered?: () => void; gate: Promise<void>; value: number }) {
        args.entered?.();
        await args.gate;
        turn.set('v', args.value);
        return args.value;
      },
      /** Waits, then calls another actor: a turn that was running when stop() began. */
      async relayWhenReleased(turn: ActorTurn, args: { entered: () => void; gate: Promise<void>; value: number }) {
        args.entered();
        await args.gate;
        await actor(turn, box, 'nested').put({ key: 'v', value: args.value });
        turn.set('v', args.value);
        return args.value;
      },
    },
  });

  /** The positive signal: stop() has done what comes before its wait, and waits for the running turn. */
  const waitingForTurns = (rt: EmbeddedRuntime) => eventually(() => expect(rt.stats().draining).toBe('turns'));

  it('waits for a running turn to finish and leaves its write durable; invoke after stop rejects', async () => {
    const rt = await h.start({ actors: [slow] });
    const gate = deferred();
    const entered = deferred();
    const call = actor(rt, slow, 's1').writeWhenReleased({ entered: entered.resolve, gate: gate.promise, value: 42 });
    await entered.promise; // the turn is running, parked on the gate
    let stopped = false;
    const stopping = rt.stop().then(() => (stopped = true));
    await waitingForTurns(rt);
    expect(stopped).toBe(false);

    gate.resolve();
    await expect(call).resolves.toBe(42);
    await stopping;
    expect(h.stateOnDisk('slow', 's1', 'v')).toBe(42);
    await expect(actor(rt, slow, 's1').writeWhenReleased({ gate: Promise.resolve(), value: 1 })).rejects.toThrow(/not running/);

    const rt2 = await h.start({ actors: [slow] });
    expect(await actor(rt2, slow, 's1').writeWhenReleased({ gate: Promise.resolve(), value: 43 })).toBe(43);
  });

  it('a second stop() called meanwhile also waits for the running turn', async () => {
    const rt = await h.start({ actors: [slow] });
    const gate = deferred();
    const entered = deferred();
    const call = actor(rt, slow, 's1').writeWhenReleased({ entered: entered.resolve, gate: gate.promise, value: 5 });
    await entered.promise; // the turn is running, parked on the gate
    const first = rt.stop();
    let secondDone = false;
    const second = rt.stop().then(() => (secondDone = true));
    await waitingForTurns(rt);
    expect(secondDone).toBe(false);
    gate.resolve();
    await Promise.all([call, first, second]);
    expect(h.stateOnDisk('slow', 's1', 'v')).toBe(5);
  });

  it('a turn running when stop() begins may still call other actors', async () => {
    const rt = await h.start({ actors: [slow, box] });
    const gate = deferred();
    const entered = deferred();
    const call = actor(rt, slow, 's1').relayWhenReleased({ entered: entered.resolve, gate: gate.promise, value: 9 });
    await entered.promise; // the turn is running, parked on the gate
    const stopping = rt.stop();
    gate.resolve();
    await expect(call).resolves.toBe(9);
    await stopping;
    expect(h.stateOnDisk('box', 'nested', 'v')).toBe(9);
    expect(h.stateOnDisk('slow', 's1', 'v')).toBe(9);
  });
});
