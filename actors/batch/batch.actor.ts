// BatchActor, one per all-or-nothing batch: the single durable decision that commits or rolls
// back every message of a compatibility batch (spec part 4 rule 4) or of a multi-recipient send.
//
// Two-phase commit with presumed abort. The gate admits each message *held* under a batch
// attempt, then asks this actor to commit that attempt; only then are the held messages
// released for delivery. A held message whose batch never decides (the gate crashed, a store
// failed) asks this actor on its watchdog reminder, which aborts the attempt if it is still
// open: the message is rolled back, and no later commit of that attempt can succeed.
// A retry of the batch (same idempotency key, so the same batch id) opens a new attempt, which
// takes over the held messages of the one it replaces. Each held message took its send from the
// tenant's quota when it was admitted; one rolled back stays counted, as a send whose turn failed
// after taking it does: the quota errs on the side of sending less. An item refused on its own
// (suppressed, invalid, over the quota) took nothing.
import { defineActor } from '../../runtime/runtime.port.ts';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { RETENTION_MS } from '../message/message.state.ts';

export const BATCH_ACTOR = 'BatchActor';

export type BatchOutcome = 'open' | 'committed' | 'aborted';

interface BatchState {
  attempt: number;
  outcome: BatchOutcome;
  /** The request the batch was opened for: a retry must be the same request. */
  request_hash?: string;
}

export const batchActor = defineActor({
  type: BATCH_ACTOR,
  methods: {
    /**
     * Opens a new attempt, or answers the one that already committed (the batch is a replay).
     * A different request under the same key is refused, unless all it left was rolled back.
     */
    async begin(turn, args?: { request_hash?: string }): Promise<{ attempt: number; committed: boolean }> {
      const s = await turn.get<BatchState>('batch');
      if (s && s.outcome !== 'aborted' && s.request_hash && args?.request_hash && s.request_hash !== args.request_hash) {
        throw new GatepostError('idempotency_key_reused');
      }
      if (s?.outcome === 'committed') return { attempt: s.attempt, committed: true };
      const attempt = (s?.attempt ?? 0) + 1;
      turn.set('batch', { attempt, outcome: 'open', request_hash: args?.request_hash } satisfies BatchState);
      // The decision must outlive the idempotency keys of the messages it decides.
      turn.setReminder('expire', Date.now() + RETENTION_MS);
      return { attempt, committed: false };
    },

    /** The commit point: from here on, every message held under `attempt` will be sent. */
    async commit(turn, { attempt }: { attempt: number }): Promise<void> {
      const s = await turn.get<BatchState>('batch');
      if (s?.attempt === attempt && s.outcome === 'committed') return;
      if (s?.attempt !== attempt || s.outcome !== 'open') {
        throw new GatepostError(
          'idempotency_key_in_flight',
          'Another request with this idempotency key took this batch over, or it waited too long and was rolled back; retry it.',
        );
      }
      turn.set('batch', { ...s, outcome: 'committed' } satisfies BatchState);
    },

    /** Rolls `attempt` back if it is still open; answers how it ended. Held messages ask this. */
    async resolve(turn, { attempt }: { attempt: number }): Promise<Exclude<BatchOutcome, 'open'>> {
      const s = await turn.get<BatchState>('batch');
      if (!s || s.attempt !== attempt) return 'aborted';
      if (s.outcome === 'open') {
        turn.set('batch', { ...s, outcome: 'aborted' } satisfies BatchState);
        return 'aborted';
      }
      return s.outcome;
    },
  },

  async onReminder(turn, name) {
    if (name === 'expire') turn.delete('batch');
  },
});
