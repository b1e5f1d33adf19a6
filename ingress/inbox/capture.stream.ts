// New captures as server-sent events. A stream wakes when this process captures for its tenant
// (the capture path emits the tenant id on `captures`), and at least every POLL_MS, which is how
// it hears of captures made by another process (the Dapr runtime's actor hosts); either way it
// reads the catalog for captures newer than the newest it has sent, so what it sends is the
// catalog's, whoever captured it. A stream whose session has ended (signed out, expired, its key
// revoked) is ended at its next wake-up.
import type { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { CapturedMessage, Catalog } from '../../store/catalog.port.ts';

const POLL_MS = 2_000;
/** The least time between two reads that found captures. */
const MIN_GAP_MS = 200;
/** The most captures one wake-up sends; more at once is a burst, which a reload shows in whole. */
const BURST = 50;

export interface StreamScope {
  tenantId: string;
  /** Only this key's captures; undefined: the tenant's. */
  keyId?: string;
  /** Whether the session the stream was opened in still holds (read again at each wake-up: a revoked key's stream ends). */
  signedIn: () => Promise<boolean>;
}

const newer = (c: CapturedMessage, than: CapturedMessage | undefined) =>
  !than || c.captured_at > than.captured_at || (c.captured_at === than.captured_at && c.message_id > than.message_id);

export const summaryOf = (c: CapturedMessage) => ({
  id: c.message_id,
  key_id: c.key_id,
  from: c.from,
  to: c.to,
  subject: c.subject,
  captured_at: c.captured_at,
});

/** Open streams, so that a server closing ends them rather than waiting for their clients to go. */
export class CaptureStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(
    private readonly catalog: Catalog,
    private readonly captures: EventEmitter | undefined,
  ) {}

  async serve(res: ServerResponse, scope: StreamScope): Promise<void> {
    // A wake-up while the loop is not waiting (reading the catalog) is kept for its next wait.
    let woken = false;
    let wake = () => void (woken = true);
    const listener = () => wake();
    this.captures?.on(scope.tenantId, listener);
    this.open.add(res);
    let closed = false;
    res.on('close', () => {
      closed = true;
      this.open.delete(res);
      this.captures?.off(scope.tenantId, listener);
      wake();
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    const page = () => this.catalog.listCaptures(scope.tenantId, { limit: BURST, key_id: scope.keyId });
    // Listening before this read: a capture made from now on is sent.
    let last = (await page()).data[0];
    res.write(': open\n\n');
    while (!closed) {
      await new Promise<void>((resolve) => {
        if (woken) return resolve();
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      woken = false;
      wake = () => void (woken = true);
      if (closed) break;
      if (!(await scope.signedIn())) {
        res.end();
        break;
      }
      const fresh = (await page()).data.filter((c) => newer(c, last));
      if (fresh.length === 0) {
        // A comment now and then: a proxy or a client closes a stream that stays silent.
        res.write(': idle\n\n');
        continue;
      }
      last = fresh[0];
      for (const c of fresh.reverse()) res.write(`event: capture\ndata: ${JSON.stringify(summaryOf(c))}\n\n`);
      // Captures arriving one after another (a load test with the inbox open) are read in
      // batches, not once each.
      await new Promise((resolve) => setTimeout(resolve, MIN_GAP_MS));
    }
  }

  /** Ends every open stream (the server is closing). */
  endAll(): void {
    for (const res of this.open) res.end();
  }
}
