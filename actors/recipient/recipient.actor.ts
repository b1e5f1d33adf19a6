// RecipientActor, one per (tenant, recipient address): the suppression state of that address.
// Changes are published on `suppression.changed` so the catalog's list of suppressions follows.
import { actor, defineActor, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { normalizeAddress } from '../../mail/address.ts';
import type { Suppression, SuppressionReason } from '../../store/catalog.port.ts';
import { NO_INDEX, type SuppressionIndex } from './suppression.index.ts';

export const RECIPIENT_ACTOR = 'RecipientActor';
export const SUPPRESSION_CHANGED = 'suppression.changed';

export interface SuppressionChanged {
  tenant_id: string;
  address: string;
  /** The entry now in force, or null when the address was removed from the list. */
  suppression: Suppression | null;
}

export const recipientActorId = (tenantId: string, address: string) => `${tenantId}:${normalizeAddress(address)}`;

function splitId(actorId: string): { tenant_id: string; address: string } {
  const i = actorId.indexOf(':');
  return { tenant_id: actorId.slice(0, i), address: actorId.slice(i + 1) };
}

type SuppressArgs = { reason: SuppressionReason; detail?: string | null };

/** `suppress`, listing each new suppression in `index` before the turn saves it. */
const suppressWith =
  (index: SuppressionIndex) =>
  async (turn: ActorTurn, args: SuppressArgs): Promise<Suppression> => {
    const existing = await turn.get<Suppression>('suppression');
    // A manual entry stays manual; a bounce or complaint on top of it keeps the first reason.
    if (existing) return existing;
    const { tenant_id, address } = splitId(turn.actorId);
    const suppression: Suppression = {
      tenant_id,
      address,
      reason: args.reason,
      detail: args.detail ?? null,
      created_at: new Date().toISOString(),
    };
    await index.list(suppression);
    turn.set('suppression', suppression);
    turn.publish(SUPPRESSION_CHANGED, { tenant_id, address, suppression } satisfies SuppressionChanged);
    return suppression;
  };

/** The actor with no index to keep (every admission asks it); `recipientActorWith` keeps one. */
export const recipientActor = defineActor({
  type: RECIPIENT_ACTOR,
  methods: {
    async check(turn): Promise<Suppression | null> {
      return (await turn.get<Suppression>('suppression')) ?? null;
    },

    suppress: suppressWith(NO_INDEX),

    async unsuppress(turn): Promise<boolean> {
      const existing = await turn.get<Suppression>('suppression');
      if (!existing) return false;
      const { tenant_id, address } = splitId(turn.actorId);
      turn.delete('suppression');
      turn.publish(SUPPRESSION_CHANGED, { tenant_id, address, suppression: null } satisfies SuppressionChanged);
      return true;
    },
  },
});

/**
 * The suppression in force for `address`, as admission and the recipient checks ask it: none at
 * once where the index does not list the address, and otherwise its actor's word.
 */
export async function suppressionOf(
  invoker: Invoker,
  index: SuppressionIndex,
  tenantId: string,
  address: string,
): Promise<Suppression | null> {
  if (!(await index.listed(tenantId, address))) return null;
  return actor(invoker, recipientActor, recipientActorId(tenantId, address)).check(undefined);
}

/** The actor, listing each suppression in `index` (admission reads it: messageActorWith). */
export function recipientActorWith(index: SuppressionIndex): typeof recipientActor {
  return { ...recipientActor, methods: { ...recipientActor.methods, suppress: suppressWith(index) } };
}
