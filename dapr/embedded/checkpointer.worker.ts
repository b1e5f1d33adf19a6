// The checkpointer thread: copies the actor store's write-ahead log back into the database file
// on a connection of its own, every CHECKPOINT_MS. The writer thread's connection does no
// checkpoints (wal_autocheckpoint = 0): one run inside a commit held that commit's answer, and
// every commit queued behind it, for the whole copy and its fsync.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../lib/sqlite.ts';

const CHECKPOINT_MS = 250;

const { file, restartFrames } = workerData as { file: string; restartFrames: number };
const db = openSqlite(file, null);

function checkpoint(): void {
  // PASSIVE: copies what no reader still needs and never waits for the writer, which goes on
  // appending to the log meanwhile.
  const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
  // SQLite goes back to the start of the log only when a transaction begins with the whole log
  // copied. Under steady load the writer's next commit always comes first, so the log would grow
  // without end (300 MB in a minute of bench:send), each commit making the file longer. Past
  // `restartFrames`, RESTART holds the writer while it copies what came since the PASSIVE copy
  // (a few ms), so that the next commit writes from the start again.
  if (log > restartFrames) db.pragma('wal_checkpoint(RESTART)');
}

const timer = setInterval(checkpoint, CHECKPOINT_MS);
parentPort!.postMessage({ ready: true });

parentPort!.on('message', (message: 'close') => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage({ closed: true });
});
