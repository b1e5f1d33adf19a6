// The index of a tenant's suppressed addresses that admission reads before it asks a
// RecipientActor: an address it does not list is not suppressed, so most sends make no call to a
// recipient's actor (on Dapr, three sidecar calls for each recipient). It does not lack an address
// an actor holds: the actor lists a suppression before it saves it, and the catalog's mirror
// (mirror.ts) takes an address off only after the actor has let it go. (One race: an address
// suppressed again while the mirror takes it off may be off the list until the mirror hears of the
// new suppression, moments later.) It may list one the actor no longer holds, for moments, or
// after a turn that failed to save: admission then asks the actor, whose word is final. On
// PostgreSQL each process answers "not listed" from its own list of the addresses that may be,
// told of a suppression another process lists once PostgreSQL's notification of its commit
// arrives (store/postgres/changes.pg.ts): for that moment, normally under a millisecond, an
// admission in another process does not see it, as if it had come a moment before.
import { normalizeAddress } from '../../mail/address.ts';
import type { Catalog, Suppression } from '../../store/catalog.port.ts';

export interface SuppressionIndex {
  /** False only when the address is certainly not suppressed. */
  listed(tenantId: string, address: string): Promise<boolean>;
  /** Lists a suppression, before its actor saves it. */
  list(suppression: Suppression): Promise<void>;
}

/** No index: every address may be suppressed, so admission asks each recipient's actor. */
export const NO_INDEX: SuppressionIndex = {
  listed: async () => true,
  list: async () => undefined,
};

/** The catalog's list of suppressions (what GET /v1/suppressions pages through) as the index. */
export function catalogIndex(catalog: Pick<Catalog, 'getSuppression' | 'putSuppression'>): SuppressionIndex {
  return {
    listed: async (tenantId, address) => (await catalog.getSuppression(tenantId, normalizeAddress(address))) !== null,
    list: (suppression) => catalog.putSuppression(suppression),
  };
}
