// The ledger's pages: entries due in the same second that come while a registration is under way
// share the next page, and a page goes once every entry on it is released. Its sidecar here
// records the calls and answers them when the test says; test/dapr/pitfalls.dapr.test.ts proves
// the pages on real daprd (a sweep after a host died, a reminder replaced, deleted and fired).
import { describe, expect, it } from 'vitest';
import { LEDGER_ACTOR, Ledger, PAGE, dueSecond, type LedgerEntry } from './ledger.ts';

interface Registration {
  id: string;
  dueAt: number;
  entries: LedgerEntry[];
  answer: (error?: Error) => void;
}

function recordingSidecar() {
  const registered: Registration[] = [];
  const deleted: string[] = [];
  return {
    registered,
    deleted,
    setReminder(type: string, id: string, name: string, dueAt: number, data: unknown) {
      expect([type, name]).toEqual([LEDGER_ACTOR, PAGE]);
      return new Promise<void>((resolve, reject) => {
        // A copy, as the real one serialises the data at the call.
        registered.push({ id, dueAt, entries: structuredClone(data as LedgerEntry[]), answer: (e) => (e ? reject(e) : resolve()) });
      });
    },
    async deleteReminder(type: string, id: string, name: string) {
      expect([type, name]).toEqual([LEDGER_ACTOR, PAGE]);
      deleted.push(id);
    },
  };
}

const outbox = (n: number): LedgerEntry => ({ kind: 'outbox', type: 'Probe', id: `p${n}`, key: `__outbox/k${n}` });
const reminder = (n: number, due: number): LedgerEntry => ({ kind: 'reminder', type: 'Probe', id: `p${n}`, name: 'r', due });
const settle = () => new Promise((r) => setImmediate(r));
const SOON = dueSecond(Date.now() + 15_000);

describe('Ledger', () => {
  it('names the entries that come during a registration on one page a due second, and deletes a page once all are released', async () => {
    const sidecar = recordingSidecar();
    const ledger = new Ledger(sidecar, () => undefined);

    const first = ledger.enter(outbox(1), SOON);
    await settle();
    const later = SOON + 86_400_000;
    const [second, third, fourth] = [
      ledger.enter(outbox(2), SOON),
      ledger.enter(outbox(3), SOON),
      ledger.enter(reminder(4, later - 400), later),
    ];
    await settle();
    expect(sidecar.registered.map((r) => r.entries)).toEqual([[outbox(1)]]);

    sidecar.registered[0]!.answer();
    const releaseFirst = await first;
    await settle();
    // The next round: one page for each due second.
    expect(sidecar.registered.map((r) => [r.dueAt, r.entries])).toEqual([
      [SOON, [outbox(1)]],
      [SOON, [outbox(2), outbox(3)]],
      [later, [reminder(4, later - 400)]],
    ]);
    sidecar.registered[1]!.answer();
    sidecar.registered[2]!.answer();
    const [releaseSecond, releaseThird] = await Promise.all([second, third, fourth]);

    releaseFirst();
    releaseFirst();
    releaseSecond!();
    await settle();
    expect(sidecar.deleted).toEqual([sidecar.registered[0]!.id]);
    releaseThird!();
    await settle();
    expect(sidecar.deleted).toEqual([sidecar.registered[0]!.id, sidecar.registered[1]!.id]);
  });

  it('fails the entries of a page it could not register, and registers the next', async () => {
    const sidecar = recordingSidecar();
    const ledger = new Ledger(sidecar, () => undefined);

    const failing = ledger.enter(outbox(1), SOON);
    await settle();
    const next = ledger.enter(outbox(2), SOON);
    sidecar.registered[0]!.answer(new Error('scheduler unavailable'));
    await expect(failing).rejects.toThrow('scheduler unavailable');
    await settle();
    expect(sidecar.registered.map((r) => r.entries)).toEqual([[outbox(1)], [outbox(2)]]);
    sidecar.registered[1]!.answer();
    (await next)();
    await settle();
    expect(sidecar.deleted).toEqual([sidecar.registered[1]!.id]);
  });
});
