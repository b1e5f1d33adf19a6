// A tenant's suppressions, one address at a time: the recipient actors hold the truth, and the
// catalog's list is their index.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { recipientActor, recipientActorId } from '../actors/recipient/recipient.actor.ts';
import type { Suppression, SuppressionReason } from '../store/catalog.port.ts';

export interface Suppressions {
  /** Suppresses the address; an existing suppression keeps its first reason. */
  suppress(tenantId: string, address: string, why: { reason: SuppressionReason; detail?: string | null }): Promise<Suppression>;
  /** The suppression in force, or null. */
  check(tenantId: string, address: string): Promise<Suppression | null>;
  /** Lifts the suppression; false if the address was not suppressed. */
  unsuppress(tenantId: string, address: string): Promise<boolean>;
}

export function suppressions(invoker: Invoker): Suppressions {
  const recipient = (tenantId: string, address: string) => actor(invoker, recipientActor, recipientActorId(tenantId, address));
  return {
    suppress: (tenantId, address, why) => recipient(tenantId, address).suppress(why),
    check: (tenantId, address) => recipient(tenantId, address).check(undefined),
    unsuppress: (tenantId, address) => recipient(tenantId, address).unsuppress(undefined),
  };
}
