// TenantActor, one per tenant: the send quota (a rate per second and a count per UTC day). A
// message actor takes one send from it inside the turn that admits the message, after every
// other check, so only a message that is made counts.
import { defineActor, type ActorTurn } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { isoTime } from '../../lib/now.ts';
import type { Quota } from '../../store/catalog.port.ts';

export const TENANT_ACTOR = 'TenantActor';

interface QuotaState {
  /** UTC day, YYYY-MM-DD, that `day_count` counts. */
  day: string;
  day_count: number;
  /** Unix second that `second_count` counts. */
  second: number;
  second_count: number;
}

const SECONDS_PER_DAY = 86_400;

/** The UTC day and the Unix second that counts taken now fall in. */
function now(): Pick<QuotaState, 'day' | 'second'> {
  const ms = Date.now();
  return { day: isoTime(ms).slice(0, 10), second: Math.floor(ms / 1000) };
}

/** The counts as they stand now: a new day or second starts at zero. */
async function current(turn: ActorTurn): Promise<QuotaState> {
  const { day, second } = now();
  const prev = await turn.get<QuotaState>('quota');
  return {
    day,
    day_count: prev?.day === day ? prev.day_count : 0,
    second,
    second_count: prev?.second === second ? prev.second_count : 0,
  };
}

export const tenantActor = defineActor({
  type: TENANT_ACTOR,
  methods: {
    /**
     * Takes one send from the quota, or refuses it. The day's count is checked first, so a send
     * refused for both is told quota_exceeded (its Retry-After is the longer).
     */
    async take(turn, args: { quota: Quota }): Promise<void> {
      const s = await current(turn);
      const { per_second, per_day } = args.quota;
      if (per_day !== null && s.day_count >= per_day) {
        throw new GatepostError('quota_exceeded', `The daily quota of ${per_day} sends is used up; it resets at 00:00 UTC.`, {
          retryAfter: SECONDS_PER_DAY - (s.second % SECONDS_PER_DAY),
        });
      }
      if (per_second !== null && s.second_count >= per_second) {
        throw new GatepostError('rate_limited', `At most ${per_second} sends per second are allowed.`, { retryAfter: 1 });
      }
      s.day_count += 1;
      s.second_count += 1;
      turn.set('quota', s);
    },
  },
});
