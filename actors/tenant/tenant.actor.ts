// TenantActor, one per tenant: the send quota (a rate per second and a count per UTC day), and
// the chain of the tenant's delivery receipts. A message actor takes one send from the quota
// inside the turn that admits the message, after every other check, so only a message that is
// made counts. Each accepted delivery's receipt takes its place in the chain here, one at a time
// (mta/receipt.ts, docs/receipts.md); `issueReceipt` below signs it.
import { actor, defineActor, type ActorTurn, type Invoker } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { isoTime } from '../../lib/now.ts';
import type { Quota } from '../../store/catalog.port.ts';
import { chainedPayload, newReceiptId, payloadHash, signReceipt, type ReceiptDraft, type SigningKey } from '../../mta/receipt.ts';

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

/** The head of the tenant's receipt chain. */
interface ReceiptChain {
  /** The last receipt's seq; 0 before the first. */
  seq: number;
  /** Its payload hash (the next receipt's `prev`); null before the first. */
  last_hash: string | null;
}

/** A receipt as the chain issued it: the payload its JWS signs. */
export interface ChainedReceipt {
  id: string;
  seq: number;
  payload: string;
}

/**
 * How many of its latest receipts a tenant's actor keeps, so that a call repeated for the same
 * message, attempt and envelope recipients gets the receipt it was given, not a second link. A repeat comes from a
 * runtime retrying the call, within moments; older receipts are dropped as new ones come.
 */
export const RECENT_RECEIPTS = 1024;

/** An attempt makes one transaction per recipient domain, each with its receipt: the envelope's recipients tell them apart. */
const receiptKey = (d: ReceiptDraft) => `receipt:${d.message_id}:${d.attempt}:${d.envelope.to}`;
const recentKey = (seq: number) => `receipt-recent:${seq % RECENT_RECEIPTS}`;

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

    /**
     * Puts an accepted delivery's receipt next in the tenant's chain: a new `rcp_` id, the next
     * seq, the hash of the payload before and the time; answers the payload to sign. The same
     * message, attempt and envelope recipients again answers the same receipt.
     */
    async chainReceipt(turn, draft: ReceiptDraft): Promise<ChainedReceipt> {
      const key = receiptKey(draft);
      const issued = await turn.get<ChainedReceipt>(key);
      if (issued) return issued;
      const chain = (await turn.get<ReceiptChain>('receipts')) ?? { seq: 0, last_hash: null };
      const seq = chain.seq + 1;
      const id = newReceiptId();
      const payload = chainedPayload(draft, { id, tenant_id: turn.actorId, seq, prev: chain.last_hash, issued_at: isoTime() });
      const receipt: ChainedReceipt = { id, seq, payload };
      // The receipt RECENT_RECEIPTS before this one leaves the kept ones as this one comes.
      const dropped = await turn.get<string>(recentKey(seq));
      if (dropped !== undefined) turn.delete(dropped);
      turn.set(recentKey(seq), key);
      turn.set(key, receipt);
      turn.set('receipts', { seq, last_hash: payloadHash(payload) } satisfies ReceiptChain);
      return receipt;
    },
  },
});

/** Where the key receipts are signed with comes from (mta/receipt.keys.ts's ReceiptKeys). */
export interface ReceiptSigner {
  current(): Promise<SigningKey>;
}

/**
 * Issues the receipt of an accepted delivery: chained by the tenant's actor, then signed. The key
 * is read first, so a host that cannot sign makes no link. Answers `{ id, jws, seq }`: the JWS
 * goes on the timeline outcome and on `email.sent`.
 */
export async function issueReceipt(
  invoker: Invoker,
  keys: ReceiptSigner,
  tenantId: string,
  draft: ReceiptDraft,
): Promise<{ id: string; jws: string; seq: number }> {
  const key = await keys.current();
  const { id, seq, payload } = await actor(invoker, tenantActor, tenantId).chainReceipt(draft);
  return { id, seq, jws: signReceipt(payload, key) };
}
