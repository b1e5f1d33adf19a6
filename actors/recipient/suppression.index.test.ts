// The suppression index as admission reads it: a suppression is listed in the catalog before its
// actor saves it, so admission refuses it without waiting for the mirror; an address the catalog
// does not list costs no call to its actor; one still listed after its actor let it go is asked,
// and sent to.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { actor, type ActorTurn } from '../../runtime/runtime.port.ts';
import { harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { messageActor, messageActorWith } from '../message/message.actor.ts';
import { admitArgs } from '../message/message.testkit.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { recipientActor, recipientActorId, recipientActorWith } from './recipient.actor.ts';
import { catalogIndex } from './suppression.index.ts';

let h: Harness;
let catalog: SqliteCatalog;
afterEach(async () => {
  catalog?.close();
  await h.cleanup();
});

/** A runtime whose actors keep and read the catalog's index; `asked` counts RecipientActor.check turns. */
async function start() {
  h = harness();
  catalog = new SqliteCatalog(join(h.file, '..', 'catalog.sqlite'));
  const index = catalogIndex(catalog);
  const recipients = recipientActorWith(index);
  const counter = { asked: 0 };
  const counted = {
    ...recipients,
    methods: {
      ...recipients.methods,
      check: (turn: ActorTurn) => {
        counter.asked++;
        return recipients.methods.check(turn);
      },
    },
  };
  const runtime = await h.start({ actors: [messageActorWith({ suppressions: index, tally: null }), counted, tenantActor] });
  const admit = (id: string, to: string) =>
    actor(runtime, messageActor, id).admit(admitArgs({ content: { ...admitArgs().content, to } }));
  const recipient = (address: string) => actor(runtime, recipientActor, recipientActorId('ten_1', address));
  return { admit, recipient, counter };
}

describe('the suppression index admission reads', () => {
  it('asks no recipient actor about an address the catalog does not list', async () => {
    const { admit, counter } = await start();
    await expect(admit('msg_a', 'new@example.com')).resolves.toMatchObject({ replayed: false });
    expect(counter.asked).toBe(0);
  });

  it('lists a suppression before its actor saves it, so the next admission refuses it', async () => {
    const { admit, recipient, counter } = await start();
    await recipient('gone@example.com').suppress({ reason: 'manual' });
    // No mirror runs here: the actor's own turn listed it.
    expect(await catalog.getSuppression('ten_1', 'gone@example.com')).toMatchObject({ reason: 'manual' });
    await expect(admit('msg_b', 'Gone@Example.com')).rejects.toMatchObject({ code: 'recipient_suppressed' });
    expect(counter.asked).toBe(1);
  });

  it('asks the actor about an address still listed after it was let go, and sends to it', async () => {
    const { admit, recipient, counter } = await start();
    await recipient('back@example.com').suppress({ reason: 'manual' });
    await recipient('back@example.com').unsuppress(undefined);
    // The catalog takes it off only when the mirror hears of it; until then the actor decides.
    expect(await catalog.getSuppression('ten_1', 'back@example.com')).not.toBeNull();
    await expect(admit('msg_c', 'back@example.com')).resolves.toMatchObject({ replayed: false });
    expect(counter.asked).toBe(1);
  });
});
