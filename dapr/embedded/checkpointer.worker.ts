// The checkpointer thread: copies the actor store's write-ahead log back into the database file
// on a connection of its own, every CHECKPOINT_MS. The writer thread's connection does no
// checkpoints (wal_autocheckpoint = 0): one run inside a commit held that commit's answer, and
// every commit queued behind it, for the whole copy and its fsync.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../lib/sqlite.ts';

const CHECKPOINT_MS = 250;

const db = openSqlite((workerData as { file: string }).file, null);
// PASSIVE: copies what no reader still needs and never waits for the writer, which goes on
// appending to the log meanwhile.
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), CHECKPOINT_MS);
parentPort!.postMessage({ ready: true });

parentPort!.on('message', (message: 'close') => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage({ closed: true });
});
