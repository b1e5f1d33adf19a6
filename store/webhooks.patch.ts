// What each change does to a webhook endpoint, shared by every catalog implementation so they
// agree: a store only reads the row, applies one of these, and writes the result.
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
