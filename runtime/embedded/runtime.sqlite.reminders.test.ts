// Reminders of the embedded runtime: they fire at least once, as a turn on their actor, at or
// after their time, across restarts and beyond the in-memory horizon (runtime/runtime.port.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { actor, defineActor, type ActorTurn } from '../runtime.port.ts';
import { deferred } from '../../lib/deferred.ts';
import { eventually, harness, type Harness } from './runtime.sqlite.testkit.ts';

let h: Harness;
beforeEach(() => {
  h = harness();
  firings.length = 0;
  failuresLeft.clear();
});
afterEach(async () => {
  await h.cleanup();
});

interface Firing {
  id: string;
  name: string;
  data: unknown;
  at: number;
}
const firings: Firing[] = [];
/** How many more times the reminder handler throws for a reminder name. */
const failuresLeft = new Map<string, number>();

const alarm = defineActor({
  type: 'alarm',
  methods: {
    async arm(turn: ActorTurn, args: { name: string; dueAt: number; data?: unknown }) {
      turn.setReminder(args.name, args.dueAt, args.data);
    },
    async disarm(turn: ActorTurn, name: string) {
      turn.deleteReminder(name);
    },
    async fired(turn: ActorTurn, name: string) {
      return (await turn.get<number>(`fired:${name}`)) ?? 0;
    },
    /** Holds the actor until `gate` resolves, then (re)sets the reminder `name`. */
    async holdThenArm(
      turn: ActorTurn,
      args: { entered: () => void; gate: Promise<void>; name: string; dueAt: number; data?: unknown },
    ) {
      args.entered();
      await args.gate;
      turn.setReminder(args.name, args.dueAt, args.data);
    },
    /** Holds the actor until `gate` resolves, then deletes `name` and sets `marker`. */
    async holdThenDisarm(turn: ActorTurn, args: { entered: () => void; gate: Promise<void>; name: string; marker: number }) {
      args.entered();
      await args.gate;
      turn.deleteReminder(args.name);
      turn.setReminder('marker', args.marker);
    },
  },
  async onReminder(turn, name, data) {
    const left = failuresLeft.get(name) ?? 0;
    firings.push({ id: turn.actorId, name, data, at: Date.now() });
    if (left > 0) {
      failuresLeft.set(name, left - 1);
      throw new Error(`reminder ${name} fails on purpose`);
    }
    // A turn like any other: its state write is saved with the reminder's deletion.
    turn.set(`fired:${name}`, ((await turn.get<number>(`fired:${name}`)) ?? 0) + 1);
    const again = data as { again?: number; everyMs?: number } | undefined;
    if (again?.again) turn.setReminder(name, Date.now() + (again.everyMs ?? 20), { ...again, again: again.again - 1 });
  },
});

const remindersOnDisk = () =>
  h.read((db) => db.prepare('SELECT actor_id AS id, name, due_at AS dueAt, data FROM reminders ORDER BY name').all()) as {
    id: string;
    name: string;
    dueAt: number;
    data: string | null;
  }[];

describe('reminders', () => {
  it('fire once, at or after their time, as a turn on their actor, with their data', async () => {
    const rt = await h.start({ actors: [alarm] });
    const dueAt = Date.now() + 100;
    await actor(rt, alarm, 'a1').arm({ name: 'wake', dueAt, data: { msg: 'hello', n: [1, 2] } });
    expect(remindersOnDisk()).toEqual([{ id: 'a1', name: 'wake', dueAt, data: JSON.stringify({ msg: 'hello', n: [1, 2] }) }]);

    await eventually(() => expect(firings).toHaveLength(1));
    expect(firings[0]).toMatchObject({ id: 'a1', name: 'wake', data: { msg: 'hello', n: [1, 2] } });
    expect(firings[0]!.at).toBeGreaterThanOrEqual(dueAt);
    // The firing turn's write and the reminder's removal were committed together.
    await eventually(() => expect(remindersOnDisk()).toEqual([]));
    expect(await actor(rt, alarm, 'a1').fired('wake')).toBe(1);

    // Once: a later reminder fires and the first has not fired again.
    await actor(rt, alarm, 'a1').arm({ name: 'later', dueAt: Date.now() + 50 });
    await eventually(() => expect(firings.map((f) => f.name)).toEqual(['wake', 'later']));
    expect(await actor(rt, alarm, 'a1').fired('wake')).toBe(1);
  });

  it('a reminder set again in its own firing turn fires again', async () => {
    const rt = await h.start({ actors: [alarm] });
    await actor(rt, alarm, 'a1').arm({ name: 'tick', dueAt: Date.now() + 20, data: { again: 2 } });
    await eventually(() => expect(firings.map((f) => (f.data as { again: number }).again)).toEqual([2, 1, 0]));
    await eventually(() => expect(remindersOnDisk()).toEqual([]));
    expect(await actor(rt, alarm, 'a1').fired('tick')).toBe(3);
  });

  it('deleteReminder cancels it', async () => {
    const rt = await h.start({ actors: [alarm] });
    const now = Date.now();
    await actor(rt, alarm, 'a1').arm({ name: 'cancelled', dueAt: now + 100 });
    await actor(rt, alarm, 'a1').arm({ name: 'kept', dueAt: now + 200 });
    await actor(rt, alarm, 'a1').disarm('cancelled');
    expect(remindersOnDisk().map((r) => r.name)).toEqual(['kept']);
    // 'kept' was due after 'cancelled': once it has fired, 'cancelled' would have too.
    await eventually(() => expect(firings.map((f) => f.name)).toEqual(['kept']));
    expect(await actor(rt, alarm, 'a1').fired('cancelled')).toBe(0);
  });

  it('setting a reminder again replaces it', async () => {
    const rt = await h.start({ actors: [alarm] });
    const now = Date.now();
    await actor(rt, alarm, 'a1').arm({ name: 'r', dueAt: now + 50, data: 'first' });
    await actor(rt, alarm, 'a1').arm({ name: 'r', dueAt: now + 150, data: 'second' });
    await eventually(() => expect(firings.map((f) => f.data)).toEqual(['second']));
    expect(firings[0]!.at).toBeGreaterThanOrEqual(now + 150);
    await actor(rt, alarm, 'a1').arm({ name: 'marker', dueAt: Date.now() + 50 });
    await eventually(() => expect(firings.map((f) => f.data ?? f.name)).toEqual(['second', 'marker']));
  });

  it('a reminder set nearer than the one the clock waits for fires in its time', async () => {
    const rt = await h.start({ actors: [alarm] });
    await actor(rt, alarm, 'a1').arm({ name: 'late', dueAt: Date.now() + 60_000 });
    const early = Date.now() + 50;
    await actor(rt, alarm, 'a2').arm({ name: 'early', dueAt: early });
    // Not when the clock would next have woken for 'late' or its horizon, a minute or half one away.
    await eventually(() => expect(firings.map((f) => f.name)).toEqual(['early']));
    expect(firings[0]!.at).toBeGreaterThanOrEqual(early);
  });

  it('thousands of watchdogs moved out of the horizon leave the reminders still due firing', async () => {
    const rt = await h.start({ actors: [alarm] });
    const now = Date.now();
    const dueOf = (i: number) => now + 1500 + ((i * 7919) % 1000);
    // As a message's watchdog: due in 30 s, moved a day ahead once the message is delivered. The
    // clock holds each moved one until its time or a clean-up; ten others, due in a second or two,
    // are set among them and must survive the clean-ups.
    const kept: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const a = actor(rt, alarm, `m${i}`);
      if (i % 300 === 7) {
        kept.push(`m${i}`);
        await a.arm({ name: 'watch', dueAt: dueOf(i) });
      } else {
        await a.arm({ name: 'watch', dueAt: now + 30_000 });
        await a.arm({ name: 'watch', dueAt: now + 86_400_000 });
      }
    }
    await eventually(() => expect(firings.map((f) => f.id).sort()).toEqual([...kept].sort()), 10_000);
    for (const f of firings) expect(f.at).toBeGreaterThanOrEqual(dueOf(Number(f.id.slice(1))));
    expect(remindersOnDisk().filter((r) => r.dueAt === now + 86_400_000)).toHaveLength(2990);
  });

  it('a reminder re-set by a turn that ran between its firing and its turn is not lost', async () => {
    // The reminder comes due while its actor is busy; the busy turn moves it to later. The firing
    // that was queued behind must not delete the new registration.
    const rt = await h.start({ actors: [alarm] });
    const a = actor(rt, alarm, 'a1');
    await a.arm({ name: 'r', dueAt: Date.now() + 30, data: 'first' });
    const gate = deferred();
    const entered = deferred();
    const dueAt = Date.now() + 300;
    const holding = a.holdThenArm({ entered: entered.resolve, gate: gate.promise, name: 'r', dueAt, data: 'second' });
    await entered.promise;
    // Let 'first' come due and its firing queue up behind the held turn.
    await eventually(() => expect(rt.stats().reminders).toBe(0));
    gate.resolve();
    await holding;
    await eventually(() => expect(firings.map((f) => f.data)).toContain('second'), 3000);
    expect(firings.find((f) => f.data === 'second')!.at).toBeGreaterThanOrEqual(dueAt);
    await eventually(() => expect(remindersOnDisk()).toEqual([]));
  });

  it('a reminder deleted by a turn that ran between its firing and its turn does not fire', async () => {
    const rt = await h.start({ actors: [alarm] });
    const a = actor(rt, alarm, 'a1');
    await a.arm({ name: 'r', dueAt: Date.now() + 30, data: 'cancelled' });
    const gate = deferred();
    const entered = deferred();
    const holding = a.holdThenDisarm({ entered: entered.resolve, gate: gate.promise, name: 'r', marker: Date.now() + 100 });
    await entered.promise;
    await eventually(() => expect(rt.stats().reminders).toBe(0)); // 'r' came due, its firing queued behind
    gate.resolve();
    await holding;
    await eventually(() => expect(firings.map((f) => f.name)).toEqual(['marker']));
    expect(await a.fired('r')).toBe(0);
  });

  it('a reminder due while the runtime is stopped fires after a restart', async () => {
    const rt1 = await h.start({ actors: [alarm] });
    const dueAt = Date.now() + 100;
    await actor(rt1, alarm, 'a1').arm({ name: 'overnight', dueAt, data: { keep: true } });
    await rt1.stop();
    // The positive signal: a reminder due after it, on a runtime of its own, has fired. Had the
    // stopped runtime's clock gone on, 'overnight', due first, would have fired before it.
    const other = harness();
    try {
      const witness = await other.start({ actors: [alarm] });
      await actor(witness, alarm, 'w1').arm({ name: 'witness', dueAt: dueAt + 20, data: null });
      await eventually(() => expect(firings.map((f) => f.id)).toContain('w1'));
    } finally {
      await other.cleanup();
    }
    expect(firings.splice(0).map((f) => f.name)).toEqual(['witness']);

    const rt2 = await h.start({ actors: [alarm] });
    await eventually(() => expect(firings).toMatchObject([{ id: 'a1', name: 'overnight', data: { keep: true } }]));
    await eventually(() => expect(remindersOnDisk()).toEqual([]));
    expect(await actor(rt2, alarm, 'a1').fired('overnight')).toBe(1);
  });

  it('a reminder beyond the in-memory horizon is loaded from disk and fires when its time comes', async () => {
    const rt = await h.start({ actors: [alarm], options: { reminderHorizonMs: 200 } });
    const dueAt = Date.now() + 1000;
    await actor(rt, alarm, 'a1').arm({ name: 'far', dueAt, data: 'far away' });
    await actor(rt, alarm, 'a1').arm({ name: 'near', dueAt: Date.now() + 60, data: 'near' });
    // Only on disk for now; the near one fires meanwhile.
    expect(remindersOnDisk().map((r) => r.name)).toEqual(['far', 'near']);
    await eventually(() => expect(firings.map((f) => f.name)).toEqual(['near']));
    expect(rt.stats().reminders).toBe(0);

    await eventually(() => expect(firings.map((f) => f.name)).toEqual(['near', 'far']), 3000);
    expect(firings[1]).toMatchObject({ data: 'far away' });
    expect(firings[1]!.at).toBeGreaterThanOrEqual(dueAt);
  });

  it('beyond the horizon, one set, then replaced by a nearer one, fires once with the new data', async () => {
    const rt = await h.start({ actors: [alarm], options: { reminderHorizonMs: 200 } });
    const now = Date.now();
    await actor(rt, alarm, 'a1').arm({ name: 'r', dueAt: now + 600, data: 'old' });
    await actor(rt, alarm, 'a1').arm({ name: 'r', dueAt: now + 100, data: 'new' });
    await eventually(() => expect(firings.map((f) => f.data)).toEqual(['new']));
    await actor(rt, alarm, 'a1').arm({ name: 'marker', dueAt: now + 800 });
    await eventually(() => expect(firings.map((f) => f.data ?? f.name)).toEqual(['new', 'marker']), 3000);
  });

  it('a handler that throws is retried later with the same data, and saved nothing the first time', async () => {
    const rt = await h.start({ actors: [alarm] });
    failuresLeft.set('flaky', 1);
    await actor(rt, alarm, 'a1').arm({ name: 'flaky', dueAt: Date.now(), data: { attempt: 'any' } });
    await eventually(() => expect(firings).toHaveLength(1));
    expect(await actor(rt, alarm, 'a1').fired('flaky')).toBe(0);
    expect(remindersOnDisk().map((r) => r.name)).toEqual(['flaky']);

    await eventually(() => expect(firings).toHaveLength(2), 5000);
    expect(firings.map((f) => f.data)).toEqual([{ attempt: 'any' }, { attempt: 'any' }]);
    await eventually(() => expect(remindersOnDisk()).toEqual([]));
    expect(await actor(rt, alarm, 'a1').fired('flaky')).toBe(1);
    expect(h.logs.some((l) => /reminder flaky of alarm\/a1 failed/.test(l.message))).toBe(true);
  });

  it('reminders of different actors with the same name are independent', async () => {
    const rt = await h.start({ actors: [alarm] });
    const now = Date.now();
    await actor(rt, alarm, 'a1').arm({ name: 'same', dueAt: now + 30, data: 1 });
    await actor(rt, alarm, 'a2').arm({ name: 'same', dueAt: now + 30, data: 2 });
    await actor(rt, alarm, 'a2').disarm('same');
    await actor(rt, alarm, 'a3').arm({ name: 'same', dueAt: now + 60, data: 3 });
    await eventually(() =>
      expect(firings.map((f) => [f.id, f.data])).toEqual([
        ['a1', 1],
        ['a3', 3],
      ]),
    );
  });
});
