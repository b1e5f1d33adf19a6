import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairQueue, type Stream, type Ticket } from './fair.queue.ts';

/** A queue whose deliveries finish only when the test says: `finish()` ends the oldest running one. */
function harness(slots: number) {
  const started: Ticket[] = [];
  const running: (() => void)[] = [];
  const q = new FairQueue({
    slots,
    run: (t) => {
      started.push(t);
      return new Promise<void>((resolve) => running.push(resolve));
    },
  });
  let seq = 0;
  const push = (tenant: string, opts: { stream?: Stream; weight?: number; destination?: string; queuedAt?: number } = {}) => {
    const id = `${tenant}-${++seq}`;
    q.push({
      id,
      tenant,
      stream: opts.stream ?? 'transactional',
      destination: opts.destination ?? 'example.com',
      queuedAt: opts.queuedAt ?? seq,
      weight: opts.weight ?? 1,
    });
    return id;
  };
  /** Ends running deliveries one by one until `n` have started; the tenants in start order. */
  const drain = async (n: number) => {
    while (started.length < n && running.length > 0) {
      running.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return started.map((t) => t.tenant);
  };
  return { q, push, drain, started };
}

describe('FairQueue', () => {
  it('lets a quiet tenant in beside a backlog: one slot of the backlog after the one in flight, then its turn', async () => {
    const { push, drain, started } = harness(1);
    for (let i = 0; i < 100; i++) push('noisy');
    const quiet = push('quiet');
    await drain(4);
    // The first of the backlog took the slot alone; the backlog's turn in the round came before
    // the quiet tenant joined it, so one more of it goes (the bound: Σ ⌈w⌉ of the others, 1), then the quiet one.
    expect(started.slice(0, 4).map((t) => t.tenant)).toEqual(['noisy', 'noisy', 'quiet', 'noisy']);
    expect(started[2]!.id).toBe(quiet);
  });

  it('alternates two backlogs of equal weight, in each tenant’s own order', async () => {
    const { push, drain, started } = harness(1);
    for (let i = 0; i < 5; i++) {
      push('a');
      push('b');
    }
    expect(await drain(10)).toEqual(['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b', 'a', 'b']);
    const aIds = started.filter((t) => t.tenant === 'a').map((t) => t.queuedAt);
    expect(aIds).toEqual([...aIds].sort((x, y) => x - y));
  });

  it('gives slots in proportion to the weights', async () => {
    const { push, drain } = harness(1);
    for (let i = 0; i < 60; i++) {
      push('heavy', { weight: 3 });
      push('light', { weight: 1 });
    }
    const order = (await drain(41)).slice(1, 41); // past the first, which took the slot alone
    expect(order.filter((t) => t === 'heavy')).toHaveLength(30);
    expect(order.filter((t) => t === 'light')).toHaveLength(10);
  });

  it('serves a weight below one every other round', async () => {
    const { push, drain } = harness(1);
    for (let i = 0; i < 20; i++) {
      push('half', { weight: 0.5 });
      push('one', { weight: 1 });
    }
    const order = (await drain(31)).slice(1, 31);
    expect(order.filter((t) => t === 'one')).toHaveLength(20);
    expect(order.filter((t) => t === 'half')).toHaveLength(10);
  });

  it('sends a tenant’s transactional mail before its broadcasts', async () => {
    const { push, drain, started } = harness(1);
    push('t', { stream: 'broadcast' }); // takes the free slot at once
    push('t', { stream: 'broadcast' });
    push('t', { stream: 'broadcast' });
    push('t', { stream: 'transactional' });
    push('t', { stream: 'transactional' });
    await drain(5);
    expect(started.map((t) => t.stream)).toEqual(['broadcast', 'transactional', 'transactional', 'broadcast', 'broadcast']);
  });

  it('keeps a slot count per destination, and one destination never waits for another', async () => {
    const { push, started } = harness(2);
    for (let i = 0; i < 5; i++) push('a', { destination: 'slow.example' });
    push('a', { destination: 'fast.example' });
    expect(started.map((t) => t.destination)).toEqual(['slow.example', 'slow.example', 'fast.example']);
  });

  it('drops a ticket whose message already waits or is in flight, answering when the first is done, and takes it again after', async () => {
    const { q, drain, started } = harness(1);
    const t = { id: 'm1', tenant: 'a', stream: 'transactional' as const, destination: 'd', queuedAt: 1, weight: 1 };
    const settled: string[] = [];
    const first = q.push(t);
    void first.then(() => settled.push('m1'));
    expect(q.push(t)).toBe(first);
    const second = q.push({ ...t, id: 'm2' });
    void second.then(() => settled.push('m2'));
    await drain(2);
    await first;
    expect(settled).toEqual(['m1']);
    const again = q.push(t);
    expect(again).not.toBe(first);
    await drain(3);
    await second;
    expect(started.map((x) => x.id)).toEqual(['m1', 'm2', 'm1']);
    expect(settled).toEqual(['m1', 'm2']);
  });

  it('puts a message restored after a restart back at its place in its tenant’s line', async () => {
    const { push, drain, started } = harness(1);
    push('a', { queuedAt: 10 });
    push('a', { queuedAt: 30 });
    push('a', { queuedAt: 40 });
    push('a', { queuedAt: 20 }); // came back from its reminder after the later ones
    await drain(4);
    expect(started.map((t) => t.queuedAt)).toEqual([10, 20, 30, 40]);
  });

  it('keeps each line in order through a long backlog, a restored message included', async () => {
    const { push, drain, started } = harness(8);
    for (let i = 1; i <= 3000; i++) push('a', { queuedAt: i * 2 });
    await drain(2000); // past the point where the taken prefix is dropped
    push('a', { queuedAt: 4001 }); // came back from its reminder, between two still waiting
    await drain(3001);
    const order = started.map((t) => t.queuedAt);
    expect(order).toHaveLength(3001);
    expect(order).toEqual([...order].sort((x, y) => x - y));
  });

  it('shows waiting, in flight and the oldest per tenant and destination', () => {
    const { q, push } = harness(1);
    push('a', { queuedAt: 5 });
    push('a', { queuedAt: 6 });
    push('b', { queuedAt: 7 });
    expect(q.rows()).toEqual([
      { tenant_id: 'a', destination: 'example.com', waiting: 1, in_flight: 1, oldest_queued_at: 6 },
      { tenant_id: 'b', destination: 'example.com', waiting: 1, in_flight: 0, oldest_queued_at: 7 },
    ]);
  });

  it('frees the slot of a delivery that failed, and reports it', async () => {
    const failures: string[] = [];
    let calls = 0;
    const q = new FairQueue({
      slots: 1,
      run: async () => {
        if (++calls === 1) throw new Error('store down');
      },
      failed: (t, e) => failures.push(`${t.id}: ${String(e)}`),
    });
    const m1 = q.push({ id: 'm1', tenant: 'a', stream: 'transactional', destination: 'd', queuedAt: 1, weight: 1 });
    const m2 = q.push({ id: 'm2', tenant: 'a', stream: 'transactional', destination: 'd', queuedAt: 2, weight: 1 });
    // Whoever holds m1's hand-over learns it failed (and the runtime hands it over again).
    await expect(m1).rejects.toThrow('store down');
    await m2;
    expect(failures).toEqual(['m1: Error: store down']);
    expect(calls).toBe(2);
    expect(q.rows()).toEqual([]);
  });
});

describe('FairQueue.close', () => {
  it('gives out no more slots and resolves once the deliveries in flight have settled', async () => {
    const ends: (() => void)[] = [];
    const ran: string[] = [];
    const q = new FairQueue({
      slots: 1,
      run: (t) => {
        ran.push(t.id);
        return new Promise<void>((resolve) => ends.push(resolve));
      },
    });
    q.push({ id: 'm1', tenant: 'a', stream: 'transactional', destination: 'd', queuedAt: 1, weight: 1 });
    q.push({ id: 'm2', tenant: 'a', stream: 'transactional', destination: 'd', queuedAt: 2, weight: 1 });
    let closed = false;
    const closing = q.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    ends.shift()!();
    await closing;
    expect(ran).toEqual(['m1']);
  });
});

describe('FairQueue.destinations', () => {
  it('sums each destination over its tenants', () => {
    const q = new FairQueue({ slots: 1, run: () => new Promise(() => {}) });
    for (const [id, tenant, destination] of [
      ['m1', 'a', 'x.example'],
      ['m2', 'b', 'x.example'],
      ['m3', 'b', 'x.example'],
      ['m4', 'a', 'y.example'],
    ] as const) {
      q.push({ id, tenant, stream: 'transactional', destination, queuedAt: 1, weight: 1 });
    }
    expect(q.destinations()).toEqual([
      { destination: 'x.example', waiting: 2, in_flight: 1 },
      { destination: 'y.example', waiting: 0, in_flight: 1 },
    ]);
  });
});

describe('the bound', () => {
  it('a tenant’s first message waits for at most Σ ⌈w⌉ slots of the other tenants waiting, whatever their weights and backlogs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ weight: fc.constantFrom(0.5, 1, 1.5, 2, 3, 7), backlog: fc.integer({ min: 1, max: 30 }) }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.integer({ min: 0, max: 20 }),
        fc.constantFrom(1, 2, 4),
        async (others, servedBefore, slots) => {
          const { q, drain, started } = harness(slots);
          others.forEach((o, i) => {
            for (let k = 0; k < o.backlog; k++) q.push(ticket(`t${i}-${k}`, `t${i}`, o.weight));
          });
          await drain(Math.min(servedBefore, started.length + 1000));
          const at = started.length;
          const waiting = new Set(
            others.flatMap((o, i) => (started.filter((t) => t.tenant === `t${i}`).length < o.backlog ? [i] : [])),
          );
          q.push(ticket('new-1', 'new', 1));
          await drain(Number.MAX_SAFE_INTEGER);
          const before = started.slice(at).findIndex((t) => t.id === 'new-1');
          const bound = [...waiting].reduce((n, i) => n + Math.ceil(others[i]!.weight), 0);
          expect(before).toBeGreaterThanOrEqual(0);
          expect(before).toBeLessThanOrEqual(bound);
        },
      ),
      { numRuns: 200 },
    );
  });
});

const ticket = (id: string, tenant: string, weight: number): Ticket => ({
  id,
  tenant,
  stream: 'transactional',
  destination: 'example.com',
  queuedAt: 0,
  weight,
});
