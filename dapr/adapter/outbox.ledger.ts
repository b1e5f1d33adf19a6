// Where a turn's publications are found again should its host die after saving them and before
// publishing them. Each publishing turn saves its publications under a key of its own in its
// actor's state (no read of what an earlier turn left), and before that save the ledger names the
// key in a reminder on an actor of its own type, due a few seconds later. Turns that commit at the
// same time share one reminder: while one registration is under way, the entries of the turns
// that come meanwhile wait for the next, so under load a reminder names many turns, and a send
// registers and deletes a fraction of one (issue 27: the scheduler's writes were the first
// bottleneck, and a registration per publishing turn its most expensive call).
//
// Once every turn it names has published (or failed to save), the reminder is deleted. Should it
// fire first, its sweep asks each actor it names to publish what that key still holds.
import { newId } from '../../lib/ids.ts';
import type { SidecarClient } from './sidecar.client.ts';

/** The actor type of the ledger's reminders: every actor host hosts it. */
export const OUTBOX_ACTOR = 'GatepostOutbox';
/** The name of each of its reminders. */
export const SWEEP = 'sweep';

/** One turn's publications, saved under `key` in the state of the actor `type`/`id`. */
export interface OutboxEntry {
  type: string;
  id: string;
  key: string;
}

/** The turns one reminder names. */
interface Page {
  id: string;
  entries: OutboxEntry[];
  /** Entries not yet published (or known never saved). */
  open: number;
  registered: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class OutboxLedger {
  private collecting: Page | null = null;
  private registering = false;

  constructor(
    private readonly sidecar: Pick<SidecarClient, 'setReminder' | 'deleteReminder'>,
    /** How long after its registration a reminder sweeps what is still unpublished. */
    private readonly sweepAfterMs: number,
    private readonly log: (message: string, error?: unknown) => void,
  ) {}

  /**
   * Resolves once a registered reminder names `entry`; from then on its publications cannot be
   * stranded. Answers the call to make once they are published, or once the turn failed to save.
   */
  async enter(entry: OutboxEntry): Promise<() => void> {
    const page = (this.collecting ??= newPage());
    page.entries.push(entry);
    page.open++;
    this.registerNext();
    await page.registered;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--page.open === 0) {
        this.sidecar.deleteReminder(OUTBOX_ACTOR, page.id, SWEEP).catch((error) => {
          this.log(`deleting outbox reminder ${page.id} failed; it will sweep nothing`, error);
        });
      }
    };
  }

  /** Registers the page being collected, unless a registration is under way (it comes next). */
  private registerNext(): void {
    const page = this.collecting;
    if (this.registering || !page) return;
    this.collecting = null;
    this.registering = true;
    this.sidecar
      .setReminder(OUTBOX_ACTOR, page.id, SWEEP, Date.now() + this.sweepAfterMs, page.entries)
      .then(page.resolve, page.reject)
      .finally(() => {
        this.registering = false;
        this.registerNext();
      });
  }
}

function newPage(): Page {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const registered = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Every waiter handles a failure; this keeps a page nobody awaits from being "unhandled".
  registered.catch(() => undefined);
  return { id: newId('obx'), entries: [], open: 0, registered, resolve, reject };
}
