// Every compatibility ingress the HTTP server serves. A new style adds one line here.
import type { CompatDeps, CompatIngress } from './compat.ingress.ts';
import { browserIngress } from './browser/browser.ingress.ts';
import { styleP } from './style-p/style-p.route.ts';
import { styleM } from './style-m/style-m.route.ts';
import { styleS } from './style-s/style-s.route.ts';

export function compatIngresses(deps: CompatDeps): CompatIngress[] {
  return [styleP(deps), styleS(deps), styleM(deps), browserIngress(deps)];
}
