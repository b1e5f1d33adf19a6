// What each change does to a webhook endpoint, shared by every catalog implementation so they
// agree: a store only reads the row, applies one of these, and writes the result.
import type { Sealer } from '../lib/sealed.ts';
import type { WebhookCreate, WebhookDisabledReason, WebhookEndpoint, WebhookPatch } from './catalog.port.ts';

/** A new endpoint: enabled, no previous secret. */
export function newEndpoint(w: WebhookCreate, at: string): WebhookEndpoint {
  return {
    ...w,
    enabled: true,
    disabled_reason: null,
    disabled_at: null,
    previous_secret: null,
    previous_secret_expires_at: null,
    created_at: at,
    updated_at: at,
  };
}

export function applyWebhookPatch(w: WebhookEndpoint, patch: WebhookPatch, at: string): WebhookEndpoint {
  const next: WebhookEndpoint = { ...w, updated_at: at };
  if (patch.url !== undefined) next.url = patch.url;
  if (patch.events !== undefined) next.events = patch.events;
  if (patch.enabled === true) Object.assign(next, { enabled: true, disabled_reason: null, disabled_at: null });
  // Disabled by hand; one disabled already (410, failing) keeps the reason it has.
  if (patch.enabled === false && w.enabled) Object.assign(next, { enabled: false, disabled_reason: 'manual', disabled_at: at });
  return next;
}

/** Disabled for `reason`; one disabled already is returned as it is (the same object: nothing to write). */
export function disabledEndpoint(w: WebhookEndpoint, reason: WebhookDisabledReason, at: string): WebhookEndpoint {
  return w.enabled ? { ...w, enabled: false, disabled_reason: reason, disabled_at: at, updated_at: at } : w;
}

/** `secret` current; the current one previous, signing until `previousExpiresAt`. */
export function rotatedEndpoint(w: WebhookEndpoint, secret: string, previousExpiresAt: string, at: string): WebhookEndpoint {
  return { ...w, secret, previous_secret: w.secret, previous_secret_expires_at: previousExpiresAt, updated_at: at };
}

// Secrets at rest: sealed (lib/sealed.ts) when the catalog writes an endpoint, opened when it reads
// one, each bound to its endpoint and column. Every write seals under the current key, so an
// endpoint sealed under an old key moves to the new one with its next change.
const secretContext = (w: WebhookEndpoint, column: 'secret' | 'previous_secret') => `webhooks.${column}:${w.id}`;

/** The endpoint as a catalog stores it. */
export function sealedEndpoint(w: WebhookEndpoint, sealer: Sealer): WebhookEndpoint {
  return {
    ...w,
    secret: sealer.seal(w.secret, secretContext(w, 'secret')),
    previous_secret: w.previous_secret === null ? null : sealer.seal(w.previous_secret, secretContext(w, 'previous_secret')),
  };
}

/** The endpoint a catalog read, its secrets opened. */
export function openedEndpoint(w: WebhookEndpoint, sealer: Sealer): WebhookEndpoint {
  return {
    ...w,
    secret: sealer.open(w.secret, secretContext(w, 'secret')),
    previous_secret: w.previous_secret === null ? null : sealer.open(w.previous_secret, secretContext(w, 'previous_secret')),
  };
}
