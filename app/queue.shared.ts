// The fair queue of a cluster, for GET /v1/queue and /v1/admin/queue. On Dapr each actor host
// runs a fair queue of its own (mta/fair.queue.ts, in memory), and the processes that answer the
// API may host no actors at all: each actor host writes its queue's rows to the catalog every
// second (one row per host, replaced), and the API reads the rows of every host that told within
// the last few seconds, so a host that died leaves the view within FRESH_MS. The embedded runtime,
// one process, reads its own queue and writes nothing.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { every } from '../lib/every.ts';
import type { Catalog, QueueRow } from '../store/catalog.port.ts';

const TELL_EVERY_MS = 1000;
/** Five missed ticks: a host that stopped without taking its rows away (killed) is forgotten after this. */
const FRESH_MS = 5 * TELL_EVERY_MS;

/** Writes `rows()` under a name of this process's own every second, until `stop` takes them away. */
export function tellQueue(
  catalog: Pick<Catalog, 'putQueueSnapshot' | 'deleteQueueSnapshot'>,
  rows: () => QueueRow[],
  log: (message: string, error: unknown) => void,
): { stop(): Promise<void> } {
  const hostId = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const ticking = every(
    TELL_EVERY_MS,
    () => catalog.putQueueSnapshot(hostId, rows()),
    (error) => log('the fair queue could not be told to the catalog', error),
  );
  return {
    async stop() {
      await ticking.stop();
      await catalog.deleteQueueSnapshot(hostId);
    },
  };
}

/** Every live host's rows. */
export const clusterQueue = (catalog: Pick<Catalog, 'queueSnapshotRows'>) => () => catalog.queueSnapshotRows(FRESH_MS);
