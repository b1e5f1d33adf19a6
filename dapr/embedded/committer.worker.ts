// The writer thread: owns the actor store's write connection and commits each group it is sent,
// fsync included, while the event loop goes on serving requests.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../lib/sqlite.ts';
import { writeApplier, type Write } from './committer.apply.ts';

const db = openSqlite((workerData as { file: string }).file, null);
const apply = writeApplier(db);
parentPort!.postMessage({ ready: true });

parentPort!.on('message', (group: { seq: number; writes: Write[] } | 'close') => {
  if (group === 'close') {
    db.close();
    parentPort!.postMessage({ closed: true });
    return;
  }
  try {
    apply(group.writes);
    parentPort!.postMessage({ seq: group.seq });
  } catch (error) {
    parentPort!.postMessage({ seq: group.seq, error: String((error as Error).stack ?? error) });
  }
});
