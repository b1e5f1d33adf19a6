// What each key may do. Every route of every ingress names the permission it needs, and this is
// the one place that says which keys hold it (docs/security.md shows the same table).
import { GatepostError } from '../errors/errors.catalog.ts';
import type { ApiKey } from '../store/catalog.port.ts';

export type Permission =
  /** Send mail (captured, for a sandbox key). */
  | 'send'
  /** Read messages and their timelines; a sandbox key reads only sandbox messages. */
  | 'read_messages'
  /** Read the sandbox capture inbox. */
  | 'read_captures'
  /** Read what sending needs (templates). */
  | 'read_templates'
  /** Create, change, delete or list what live mail depends on: templates, suppressions, webhooks. */
  | 'manage';

export const PERMISSIONS: readonly Permission[] = ['send', 'read_messages', 'read_captures', 'read_templates', 'manage'];

const SANDBOX: ReadonlySet<Permission> = new Set(['send', 'read_messages', 'read_captures', 'read_templates']);
const SENDING: ReadonlySet<Permission> = new Set(['send', 'read_messages']);
const FULL: ReadonlySet<Permission> = new Set(PERMISSIONS);
// A public key sits in a web page: it sends through the browser SDK endpoints only, which check
// it themselves (gate/gate.ts), and holds no permission on any other route.
const NONE: ReadonlySet<Permission> = new Set();

/** The permissions a key holds on the native API and the server-side compatibility styles. */
export function permissionsOf(key: Pick<ApiKey, 'kind' | 'scope'>): ReadonlySet<Permission> {
  if (key.kind === 'public') return NONE;
  if (key.kind === 'sandbox') return SANDBOX;
  return key.scope === 'full_access' ? FULL : SENDING;
}

/** Refuses, with a coded 403, a key that does not hold the permission. */
export function requirePermission(key: Pick<ApiKey, 'kind' | 'scope'>, permission: Permission): void {
  if (permissionsOf(key).has(permission)) return;
  if (key.kind === 'public') {
    throw new GatepostError('key_not_allowed', 'A public key (gp_public_) can only be used by the browser SDK endpoints.');
  }
  throw new GatepostError(
    'insufficient_scope',
    key.kind === 'sandbox'
      ? `A sandbox key may not ${permission.replace('_', ' ')}: it never changes or reads what live mail depends on. Use a live key with full_access.`
      : `This live key has ${key.scope} and may not ${permission.replace('_', ' ')}. Use a key with full_access.`,
  );
}

/** Whether a key that may read messages may read this one: a sandbox key never reads a live message. */
export function mayReadMessage(key: Pick<ApiKey, 'kind'>, message: { sandbox: boolean }): boolean {
  return key.kind !== 'sandbox' || message.sandbox;
}
