// TenantActor, one per tenant: the send quota (a rate per second and a count per UTC day). The
// gate takes sends from it a group at a time (gate/quota.ts); a message actor gives back a send
// it took and did not use.
import { defineActor, type ActorTurn } from '../../runtime/runtime.port.ts';
import { GatepostError, type CodedErrorBody } from '../../errors/errors.catalog.ts';
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

/** What a group of sends got: the first `granted` of them may go; the others are refused with `refusal`. */
export interface QuotaGrant {
  granted: number;
  refusal: CodedErrorBody | null;
}

/**
 * One send's share of a group's grant, handed to the message actor with the send. The actor
 * refuses a send whose ticket was refused, but only after its own checks (a replay is still
 * answered as one); a granted ticket it does not use (a replay, a refusal) it gives back.
 */
export type QuotaTicket = { granted: true } | { granted: false; refusal: CodedErrorBody };

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
     * Takes `count` sends from the quota, as many as it has left: the day's count is checked
     * first, so a group refused for both is told quota_exceeded (its Retry-After is the longer).
     */
    async reserve(turn, args: { quota: Quota; count: number }): Promise<QuotaGrant> {
      const s = await current(turn);
      const { per_second, per_day } = args.quota;
      const dayLeft = per_day === null ? Infinity : Math.max(0, per_day - s.day_count);
      const secondLeft = per_second === null ? Infinity : Math.max(0, per_second - s.second_count);
      const granted = Math.min(args.count, dayLeft, secondLeft);
      let refusal: GatepostError | null = null;
      if (granted < args.count) {
        refusal =
          dayLeft <= secondLeft
            ? new GatepostError('quota_exceeded', `The daily quota of ${per_day} sends is used up; it resets at 00:00 UTC.`, {
                retryAfter: SECONDS_PER_DAY - (s.second % SECONDS_PER_DAY),
              })
            : new GatepostError('rate_limited', `At most ${per_second} sends per second are allowed.`, { retryAfter: 1 });
      }
      if (granted > 0) {
        s.day_count += granted;
        s.second_count += granted;
        turn.set('quota', s);
      }
      return { granted, refusal: refusal && refusal.toBody() };
    },

    /**
     * Sends taken and not used (the message was refused, or was a replay): they count no more, in
     * the day and in the second they were taken in. Taken on an earlier day, they stay counted.
     */
    async giveBack(turn, args: { count: number }): Promise<void> {
      const prev = await turn.get<QuotaState>('quota');
      const { day, second } = now();
      if (!prev || prev.day !== day) return;
      const sameSecond = prev.second === second;
      turn.set('quota', {
        ...prev,
        day_count: Math.max(0, prev.day_count - args.count),
        second_count: sameSecond ? Math.max(0, prev.second_count - args.count) : prev.second_count,
      } satisfies QuotaState);
    },
  },
});
