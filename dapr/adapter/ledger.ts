// The adapter's wake-ups, registered with the scheduler a page at a time: the reminders actors
// set, the sweep that publishes what a turn saved but its host never published, and the
// deliveries a subscriber holds (runtime.port.ts's Held), published again should the host that
// holds them die. A page is one
// scheduler reminder on an actor of the ledger's own type, naming every entry due in one second
// that a turn committed while the page before was being registered: under load a page names many
// turns, and a send registers a fraction of a reminder (issue 27: the scheduler's writes were the
// first bottleneck, and a registration the dearest call of a send).
//
// The entries are wake-ups, not the truth: an actor's reminders are in its own state (runtime.dapr.ts),
// and a page that fires asks each actor it names to run what is still due. The host that registered
// a page deletes it once none of its entries is wanted any more (their publications out, their
// reminders replaced or deleted), so most pages of short waits never fire.
import { deferred, type Deferred } from '../../lib/deferred.ts';
import { newId } from '../../lib/ids.ts';
import type { SidecarClient } from './sidecar.client.ts';

/** The actor type of the ledger's pages: every actor host hosts it. */
export const LEDGER_ACTOR = 'GatepostLedger';
/** The name of each page's reminder. */
export const PAGE = 'page';

/** What a page names: a turn's outbox key to publish, a reminder of an actor, or a held delivery to publish again. */
export type LedgerEntry =
  | { kind: 'outbox'; type: string; id: string; key: string }
  | { kind: 'reminder'; type: string; id: string; name: string; due: number }
  | { kind: 'held'; topic: string; id: string; data: unknown };

/** The entries a page asks an actor to run (through its internal method); a held delivery's it publishes itself. */
export type ActorEntry = Exclude<LedgerEntry, { kind: 'held' }>;

/** Releases an entry: the page it is on may go once all of its entries are released. */
export type Release = () => void;

/** The entries one reminder names, all due at `due` (ms since epoch, a whole second). */
interface Page {
  id: string;
  due: number;
  entries: LedgerEntry[];
  /** Entries not yet released. */
  open: number;
  /** Settled once the scheduler holds the page (or refused it). */
  registered: Deferred<void>;
}

/** A due time rounded up to its second, so that entries due close together share a page. */
export const dueSecond = (dueAt: number) => Math.ceil(dueAt / 1000) * 1000;

export class Ledger {
  /** Pages being collected while a registration is under way, by due second. */
  private collecting = new Map<number, Page>();
  private registering = false;

  constructor(
    private readonly sidecar: Pick<SidecarClient, 'setReminder' | 'deleteReminder'>,
    private readonly log: (message: string, error?: unknown) => void,
  ) {}

  /**
   * Resolves once a registered page names `entry`, due at `due` (a whole second). Answers the
   * call to make once the entry is no longer wanted; a page whose entries all are is deleted.
   */
  async enter(entry: LedgerEntry, due: number): Promise<Release> {
    let page = this.collecting.get(due);
    if (!page) {
      page = newPage(due);
      this.collecting.set(due, page);
    }
    page.entries.push(entry);
    page.open++;
    this.registerNext();
    await page.registered.promise;
    const entered = page;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--entered.open === 0) {
        this.sidecar.deleteReminder(LEDGER_ACTOR, entered.id, PAGE).catch((error) => {
          this.log(`deleting ledger page ${entered.id} failed; it will fire and find nothing due`, error);
        });
      }
    };
  }

  /** Registers the pages being collected, unless a registration is under way (they come next). */
  private registerNext(): void {
    if (this.registering || this.collecting.size === 0) return;
    const pages = [...this.collecting.values()];
    this.collecting = new Map();
    this.registering = true;
    void Promise.all(
      pages.map((page) =>
        this.sidecar.setReminder(LEDGER_ACTOR, page.id, PAGE, page.due, page.entries).then(() => {
          // Registered: the scheduler holds the entries now, and each actor's release holds the page.
          page.entries = [];
          page.registered.resolve();
        }, page.registered.reject),
      ),
    ).finally(() => {
      this.registering = false;
      this.registerNext();
    });
  }
}

function newPage(due: number): Page {
  const registered = deferred();
  // Every waiter handles a failure; this keeps a page nobody awaits from being "unhandled".
  registered.promise.catch(() => undefined);
  return { id: newId('page'), due, entries: [], open: 0, registered };
}
