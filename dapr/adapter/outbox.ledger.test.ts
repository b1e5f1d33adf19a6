// The ledger's grouping: turns that commit while a registration is under way share the next
// reminder, and a reminder goes once every turn it names is done. Its sidecar here records the
// calls and answers them when the test says; test/dapr/pitfalls.dapr.test.ts proves the sweep
// on real daprd.
import { describe, expect, it } from 'vitest';
import { OUTBOX_ACTOR, OutboxLedger, SWEEP, type OutboxEntry } from './outbox.ledger.ts';

interface Registration {
  id: string;
  entries: OutboxEntry[];
  answer: (error?: Error) => void;
}

function recordingSidecar() {
  const registered: Registration[] = [];
  const deleted: string[] = [];
  return {
    registered,
    deleted,
    setReminder(type: string, id: string, name: string, _dueAt: number, data: unknown) {
      expect([type, name]).toEqual([OUTBOX_ACTOR, SWEEP]);
      return new Promise<void>((resolve, reject) => {
        // A copy, as the real one serialises the data at the call.
        registered.push({ id, entries: structuredClone(data as OutboxEntry[]), answer: (e) => (e ? reject(e) : resolve()) });
      });
    },
    async deleteReminder(type: string, id: string, name: string) {
      expect([type, name]).toEqual([OUTBOX_ACTOR, SWEEP]);
      deleted.push(id);
    },
  };
}

const entry = (n: number): OutboxEntry => ({ type: 'Probe', id: `p${n}`, key: `__outbox/k${n}` });
const settle = () => new Promise((r) => setImmediate(r));

describe('OutboxLedger', () => {
  it('names the turns that come during a registration in one reminder, and deletes it once all are done', async () => {
    const sidecar = recordingSidecar();
    const ledger = new OutboxLedger(sidecar, 15_000, () => undefined);

    const first = ledger.enter(entry(1));
    await settle();
    const [second, third] = [ledger.enter(entry(2)), ledger.enter(entry(3))];
    await settle();
    expect(sidecar.registered.map((r) => r.entries)).toEqual([[entry(1)]]);

    sidecar.registered[0]!.answer();
    const doneFirst = await first;
    await settle();
    expect(sidecar.registered.map((r) => r.entries)).toEqual([[entry(1)], [entry(2), entry(3)]]);
    sidecar.registered[1]!.answer();
    const [doneSecond, doneThird] = await Promise.all([second, third]);

    doneFirst();
    doneFirst();
    doneSecond();
    await settle();
    expect(sidecar.deleted).toEqual([sidecar.registered[0]!.id]);
    doneThird();
    await settle();
    expect(sidecar.deleted).toEqual([sidecar.registered[0]!.id, sidecar.registered[1]!.id]);
  });

  it('fails the turns of a reminder it could not register, and registers the next', async () => {
    const sidecar = recordingSidecar();
    const ledger = new OutboxLedger(sidecar, 15_000, () => undefined);

    const failing = ledger.enter(entry(1));
    await settle();
    const next = ledger.enter(entry(2));
    sidecar.registered[0]!.answer(new Error('scheduler unavailable'));
    await expect(failing).rejects.toThrow('scheduler unavailable');
    await settle();
    expect(sidecar.registered.map((r) => r.entries)).toEqual([[entry(1)], [entry(2)]]);
    sidecar.registered[1]!.answer();
    (await next)();
    await settle();
    expect(sidecar.deleted).toEqual([sidecar.registered[1]!.id]);
  });
});
