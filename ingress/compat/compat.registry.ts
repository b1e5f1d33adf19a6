// Every compatibility ingress the HTTP server serves. A new style adds one line here.
import type { CompatDeps, CompatIngress } from './compat.ingress.ts';
import { browserIngress } from './browser/browser.ingress.ts';
import { stylePIngress } from './style-p/style-p.ingress.ts';

export function compatIngresses(deps: CompatDeps): CompatIngress[] {
  return [stylePIngress(deps), browserIngress(deps)];
}
