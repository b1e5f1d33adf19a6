// The tally of unlimited sends: admission counts them in the process, not with a TenantActor turn
// each, and a flush adds them to the tenant's day, so a daily limit set later counts them.
import { afterEach, describe, expect, it } from 'vitest';
import { actor } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { messageActor, messageActorWith } from '../message/message.actor.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { NO_INDEX } from '../recipient/suppression.index.ts';
import { utcDay } from '../../lib/now.ts';
import type { Quota } from '../../store/catalog.port.ts';
import { QuotaTally } from './quota.tally.ts';
import { TENANT_ACTOR, tenantActor } from './tenant.actor.ts';

let h: Harness;
let tally: QuotaTally | undefined;
afterEach(async () => {
  await tally?.stop();
  await h.cleanup();
});

const dayCount = () => (h.stateOnDisk(TENANT_ACTOR, 'ten_1', 'quota') as { day_count: number } | undefined)?.day_count;

/** A runtime whose admissions tally unlimited sends; the tally flushes only when told. */
async function start() {
  h = harness();
  const reported: string[] = [];
  // The harness makes and starts the runtime at once, and the tally needs it: admit finds it later.
  const later = {
    count: (tenantId: string) => tally!.count(tenantId),
    takePending: (tenantId: string) => tally!.takePending(tenantId),
  };
  const runtime = await h.start({
    actors: [recipientActor, tenantActor, messageActorWith({ suppressions: NO_INDEX, tally: later })],
  });
  tally = new QuotaTally(runtime, (m) => reported.push(m), 3_600_000);
  const admit = (id: string, quota_limits: Quota = { per_second: null, per_day: null }) =>
    actor(runtime, messageActor, id).admit(admitArgs({ quota_limits }));
  return { runtime, admit, reported };
}

describe('the quota tally', () => {
  it('counts unlimited sends with no TenantActor turn, and a flush adds them to the day', async () => {
    const { admit, reported } = await start();
    for (const id of ['msg_1', 'msg_2', 'msg_3']) await admit(id);
    expect(dayCount()).toBeUndefined();
    await tally!.flush();
    expect(dayCount()).toBe(3);

    // A daily limit of four, set now: the day's three count, so one more goes and the next is refused.
    const fourADay = { per_second: null, per_day: 4 };
    await admit('msg_4', fourADay);
    await expect(admit('msg_5', fourADay)).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(dayCount()).toBe(4);
    expect(reported).toEqual([]);
  });

  it('tells the sends not yet flushed before the first admission against a limit set since', async () => {
    const { admit } = await start();
    await admit('msg_1');
    await admit('msg_2');
    await expect(admit('msg_3', { per_second: null, per_day: 2 })).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(dayCount()).toBe(2);
  });

  it('counts nothing told about a day that has ended', async () => {
    const { runtime } = await start();
    await actor(runtime, tenantActor, 'ten_1').tally({ day: utcDay(), sends: 2 });
    await actor(runtime, tenantActor, 'ten_1').tally({ day: '2000-01-01', sends: 5 });
    expect(dayCount()).toBe(2);
  });
});
