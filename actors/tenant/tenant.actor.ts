// TenantActor, one per tenant: the send quota (a rate per second and a count per UTC day).
import { defineActor } from '../../dapr/runtime.port.ts';
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

export const tenantActor = defineActor({
  type: TENANT_ACTOR,
  methods: {
    /** Takes one send from the quota, or refuses with rate_limited / quota_exceeded and a Retry-After. */
    async reserve(turn, args: { quota: Quota }): Promise<{ day_count: number }> {
      const now = Date.now();
      const day = isoTime(now).slice(0, 10);
      const second = Math.floor(now / 1000);
      const prev = await turn.get<QuotaState>('quota');
      const s: QuotaState = {
        day,
        day_count: prev?.day === day ? prev.day_count : 0,
        second,
        second_count: prev?.second === second ? prev.second_count : 0,
      };
      const { per_second, per_day } = args.quota;
      if (per_day !== null && s.day_count >= per_day) {
        const retryAfter = SECONDS_PER_DAY - (second % SECONDS_PER_DAY);
        throw new GatepostError('quota_exceeded', `The daily quota of ${per_day} sends is used up; it resets at 00:00 UTC.`, {
          retryAfter,
        });
      }
      if (per_second !== null && s.second_count >= per_second) {
        throw new GatepostError('rate_limited', `At most ${per_second} sends per second are allowed.`, { retryAfter: 1 });
      }
      s.day_count++;
      s.second_count++;
      turn.set('quota', s);
      return { day_count: s.day_count };
    },
  },
});
