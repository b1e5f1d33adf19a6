// Every compatibility ingress the HTTP server serves. A new style adds one line here.
import type { CompatDeps, CompatIngress } from './compat.ingress.ts';

export function compatIngresses(_deps: CompatDeps): CompatIngress[] {
  return [];
}
