// RecipientActor: an address's suppression, checked, set and lifted, each change published for
// the catalog's list to follow.
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SUPPRESSION_CHANGED, recipientActor, recipientActorId, type SuppressionChanged } from './recipient.actor.ts';

let h: Harness;
afterEach(() => h.cleanup());

async function start() {
  h = harness();
  const changes: SuppressionChanged[] = [];
  const runtime = await h.start({
    actors: [recipientActor],
    subscribers: { [SUPPRESSION_CHANGED]: async ({ data }) => void changes.push(data as SuppressionChanged) },
  });
  const recipient = (address: string, tenantId = 'ten_1') => actor(runtime, recipientActor, recipientActorId(tenantId, address));
  return { recipient, changes };
}

describe('RecipientActor', () => {
  it('checks an address nobody suppressed as not suppressed, and keeps no state for it', async () => {
    const { recipient } = await start();
    expect(await recipient('ann@example.com').check(undefined)).toBeNull();
    expect(h.stateOnDisk('RecipientActor', 'ten_1:ann@example.com', 'suppression')).toBeUndefined();
  });

  it('suppresses an address, whatever its case, and publishes the entry', async () => {
    const { recipient, changes } = await start();
    const entry = await recipient(' Ann@Example.com ').suppress({ reason: 'hard_bounce', detail: '550 no such user' });
    expect(entry).toMatchObject({
      tenant_id: 'ten_1',
      address: 'ann@example.com',
      reason: 'hard_bounce',
      detail: '550 no such user',
    });
    // One actor per tenant and normalized address: every spelling finds the entry.
    expect(await recipient('ann@example.com').check(undefined)).toEqual(entry);
    expect(h.stateOnDisk('RecipientActor', 'ten_1:ann@example.com', 'suppression')).toEqual(entry);
    await eventually(() => expect(changes).toEqual([{ tenant_id: 'ten_1', address: 'ann@example.com', suppression: entry }]));
  });

  it('keeps the first reason when an address is suppressed again, and publishes nothing more', async () => {
    const { recipient, changes } = await start();
    const first = await recipient('bob@example.com').suppress({ reason: 'manual' });
    expect(first.detail).toBeNull();
    expect(await recipient('bob@example.com').suppress({ reason: 'complaint', detail: 'ARF' })).toEqual(first);
    expect(await recipient('bob@example.com').check(undefined)).toEqual(first);
    // A later change is published after the first: once it arrives, nothing came in between.
    await recipient('bob@example.com').unsuppress(undefined);
    await eventually(() => expect(changes.map((c) => c.suppression?.reason ?? null)).toEqual(['manual', null]));
  });

  it('unsuppresses an address, publishes the removal, and answers false for one not suppressed', async () => {
    const { recipient, changes } = await start();
    await recipient('cy@example.com').suppress({ reason: 'manual' });
    expect(await recipient('cy@example.com').unsuppress(undefined)).toBe(true);
    expect(await recipient('cy@example.com').check(undefined)).toBeNull();
    expect(h.stateOnDisk('RecipientActor', 'ten_1:cy@example.com', 'suppression')).toBeUndefined();
    expect(await recipient('cy@example.com').unsuppress(undefined)).toBe(false);
    // Suppressed again after all that: its publication comes after the removal, and none other.
    await recipient('cy@example.com').suppress({ reason: 'unsubscribe' });
    await eventually(() => expect(changes.map((c) => c.suppression?.reason ?? null)).toEqual(['manual', null, 'unsubscribe']));
  });

  it('keeps tenants apart: one tenant’s suppression is not another’s', async () => {
    const { recipient } = await start();
    await recipient('dee@example.com').suppress({ reason: 'manual' });
    expect(await recipient('dee@example.com', 'ten_2').check(undefined)).toBeNull();
    expect(await recipient('dee@example.com', 'ten_2').unsuppress(undefined)).toBe(false);
    expect(await recipient('dee@example.com').check(undefined)).toMatchObject({ tenant_id: 'ten_1', reason: 'manual' });
  });
});
