// What each key may do. Every route of every ingress names the permission it needs, and this is
// the one place that says which keys hold it (docs/security.md shows the same table).
import { GatepostError } from '../errors/errors.catalog.ts';
import type { ApiKey } from '../store/catalog.port.ts';

export type Permission =
  /** Send mail (captured, for a sandbox key). */
  | 'send'
  /** Read messages and their timelines; which ones, `mayReadMessage` says. */
  | 'read_messages'
  /** Read the sandbox capture inbox. */
  | 'read_captures'
  /** Read what sending needs (templates). */
  | 'read_templates'
  /** Read the tenant's event feed (GET /v1/events); a sandbox key sees its sandbox messages' events only. */
  | 'read_events'
  /** Create, change, delete or list what live mail depends on: templates, suppressions, webhooks. */
  | 'manage';

export const PERMISSIONS: readonly Permission[] = [
  'send',
  'read_messages',
  'read_captures',
  'read_templates',
  'read_events',
  'manage',
];

const SANDBOX: ReadonlySet<Permission> = new Set(['send', 'read_messages', 'read_captures', 'read_templates', 'read_events']);
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

/**
 * Whether a key that may read messages may read this one, of its own tenant or not: a full key
 * reads every message of its tenant, a sending key only those it sent (issue 20 item 1), and a
 * sandbox key only sandbox messages. A message a key may not read is, to it, one that does not exist.
 */
export function mayReadMessage(
  key: Pick<ApiKey, 'id' | 'tenant_id' | 'kind' | 'scope'>,
  message: { tenant_id: string; sandbox: boolean; key_id: string },
): boolean {
  if (message.tenant_id !== key.tenant_id) return false;
  if (key.kind === 'sandbox') return message.sandbox;
  if (key.kind === 'live' && key.scope === 'sending_access') return message.key_id === key.id;
  return permissionsOf(key).has('read_messages');
}
