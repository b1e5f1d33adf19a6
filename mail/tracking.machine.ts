// Whether an open looks machine-made: a mail provider fetching the pixel, not a person reading
// (issue 24 item 1). Such opens are still recorded, marked `machine: true`, so a sender can count
// only people if it wishes. The rule, as docs/tracking.md states it:
// - the user agent is a provider's image proxy: Gmail's (`GoogleImageProxy`), Yahoo's
//   (`YahooMailProxy`), or Apple Mail Privacy Protection's, which presents a bare `Mozilla/5.0`
//   with nothing after it; or
// - the open came within MACHINE_OPEN_MS of the message's delivery (its last `email.sent`):
//   faster than a person opens mail, as providers that prefetch on receipt do.

export const MACHINE_OPEN_MS = 2_000;

const PROXIES = [/GoogleImageProxy/i, /YahooMailProxy/i, /^Mozilla\/5\.0$/];

export function looksMachineMade(userAgent: string | null, openedAt: number, deliveredAt: number | null): boolean {
  if (userAgent !== null && PROXIES.some((p) => p.test(userAgent.trim()))) return true;
  return deliveredAt !== null && openedAt - deliveredAt >= 0 && openedAt - deliveredAt < MACHINE_OPEN_MS;
}
