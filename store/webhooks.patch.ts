// What a WebhookPatch does to an endpoint, shared by every catalog implementation so they agree.
import type { WebhookEndpoint, WebhookPatch } from './catalog.port.ts';

export function applyWebhookPatch(w: WebhookEndpoint, patch: WebhookPatch, at: string): WebhookEndpoint {
  const next: WebhookEndpoint = { ...w, updated_at: at };
  if (patch.url !== undefined) next.url = patch.url;
  if (patch.events !== undefined) next.events = patch.events;
  if (patch.enabled === true) Object.assign(next, { enabled: true, disabled_reason: null, disabled_at: null });
  // Disabled by hand; one disabled already (410, failing) keeps the reason it has.
  if (patch.enabled === false && w.enabled) Object.assign(next, { enabled: false, disabled_reason: 'manual', disabled_at: at });
  return next;
}
