// SourceIpActor, one per source address of direct delivery (GATEPOST_SOURCE_IPS): that address's
// warmup, on the same ramp and settings as a sending domain's (tenant/warmup.state.ts). Its counts
// are shared by every tenant's mail, so they are kept here, by the address, and not in a
// TenantActor; one actor per address keeps the addresses' turns apart. Durable actor state: the
// counts survive a crash or a SIGKILL. The DeliveryActor asks it (`take`) before each attempt.
import { defineActor, type ActorTurn } from '../../runtime/runtime.port.ts';
import {
  initialWarmup,
  returnWarmup,
  skippedWarmup,
  takeWarmup,
  warmupView,
  type WarmupSettings,
  type WarmupState,
  type WarmupView,
} from '../tenant/warmup.state.ts';

export const SOURCE_IP_ACTOR = 'SourceIpActor';

/** The actor of a source address: its id is the address, an IPv6 one's colons as dashes (ids go in URL paths). */
export const sourceIpActorId = (ip: string) => ip.replaceAll(':', '-');

/** Where a count was taken: given back (`giveBack`) should the attempt be held by something else. */
export type SourceTaken = Pick<WarmupState, 'day_start' | 'window_start'>;

const KEY = 'warmup';
const stateOf = async (turn: ActorTurn) => (await turn.get<WarmupState>(KEY)) ?? initialWarmup(Date.now());

export const sourceIpActor = defineActor({
  type: SOURCE_IP_ACTOR,
  methods: {
    /**
     * Whether one more message of `stream` may go from this address now: yes takes one from its
     * day's and window's counts; no says when its next window starts. No breaker freezes an
     * address's ramp (breakers are a tenant's and its domains').
     */
    async take(
      turn,
      args: { stream: 'transactional' | 'broadcast'; settings: WarmupSettings },
    ): Promise<{ go: true; taken: SourceTaken } | { go: false; at: number }> {
      const answer = takeWarmup(await stateOf(turn), args.stream, Date.now(), false, args.settings);
      turn.set(KEY, answer.state);
      if (!answer.go) return { go: false, at: answer.at };
      return { go: true, taken: { day_start: answer.state.day_start, window_start: answer.state.window_start } };
    },

    /** Gives back a count `take` took, for an attempt held after all. */
    async giveBack(turn, args: { taken: SourceTaken }): Promise<void> {
      const state = await turn.get<WarmupState>(KEY);
      if (state) turn.set(KEY, returnWarmup(state, args.taken));
    },

    /** The address's warmup as it stands. */
    async warmup(turn, args: { settings: WarmupSettings }): Promise<WarmupView> {
      return warmupView(await turn.get<WarmupState>(KEY), Date.now(), false, args.settings);
    },

    /** The operator's word: skip the ramp (the address is warm already), or restart it at `day`. */
    async setWarmup(
      turn,
      args: { change: { action: 'skip' } | { action: 'restart'; day: number }; settings: WarmupSettings },
    ): Promise<WarmupView> {
      const now = Date.now();
      const { change } = args;
      const state =
        change.action === 'skip'
          ? skippedWarmup(await turn.get<WarmupState>(KEY), now)
          : { ...initialWarmup(now), day: change.day };
      turn.set(KEY, state);
      return warmupView(state, now, false, args.settings);
    },
  },
});
