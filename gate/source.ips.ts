// The source addresses of direct delivery (GATEPOST_SOURCE_IPS) and each one's warmup, as the
// operator reads and sets them: each address's SourceIpActor holds its ramp.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { sourceIpActor, sourceIpActorId } from '../actors/source-ip/source.ip.actor.ts';
import type { WarmupSettings, WarmupView } from '../actors/tenant/warmup.state.ts';

/** An address's warmup: a domain's view without `frozen` (no breaker stands an address's ramp still). */
export type SourceIpView = { ip: string } & Omit<WarmupView, 'frozen'>;

export interface SourceIps {
  /** Every listed address, in the listed order. */
  list(): Promise<SourceIpView[]>;
  /** Whether GATEPOST_SOURCE_IPS lists `ip`. */
  has(ip: string): boolean;
  /** The operator's word on an address's warmup: skip it, or restart the ramp at `day`. */
  setWarmup(ip: string, change: { action: 'skip' } | { action: 'restart'; day: number }): Promise<SourceIpView>;
}

/** `warmup`: the settings the actors run with, so the caps shown are the ones held to. */
export function sourceIps(invoker: Invoker, ips: string[], warmup: WarmupSettings): SourceIps {
  const of = (ip: string) => actor(invoker, sourceIpActor, sourceIpActorId(ip));
  const view = (ip: string, { frozen: _, ...rest }: WarmupView): SourceIpView => ({ ip, ...rest });
  return {
    async list() {
      const views: SourceIpView[] = [];
      for (const ip of ips) views.push(view(ip, await of(ip).warmup({ settings: warmup })));
      return views;
    },
    has: (ip) => ips.includes(ip),
    setWarmup: async (ip, change) => view(ip, await of(ip).setWarmup({ change, settings: warmup })),
  };
}
