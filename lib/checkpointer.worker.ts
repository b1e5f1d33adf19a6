// The checkpointer thread: copies the store's write-ahead log back into the database file
// on a connection of its own, every CHECKPOINT_MS. The writer thread's connection does no
// checkpoints of its own accord (wal_autocheckpoint = 0): one run inside a commit held that
// commit's answer, and every commit queued behind it, for the whole copy and its fsync.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from './sqlite.ts';
import { lowerThreadPriority } from './worker.ts';

const CHECKPOINT_MS = 250;

const { file, restartFrames, restartWanted } = workerData as {
  file: string;
  restartFrames: number;
  /** Set here, cleared by the writer thread once it has started the log again (committer.worker.ts). */
  restartWanted: Int32Array;
};
const db = openSqlite(file, null);
// The event loop hands this thread its work: it must not take the core from it (lib/worker.ts).
lowerThreadPriority();

function checkpoint(): void {
  // PASSIVE: copies what no reader still needs and never waits for the writer, which goes on
  // appending to the log meanwhile.
  const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
  // SQLite goes back to the start of the log only when a transaction begins with the whole log
  // copied. Under steady load the writer's next commit always comes first, so the log would grow
  // without end (300 MB in a minute of bench:send), each commit making the file longer. Past
  // `restartFrames` the writer is asked to run RESTART between two of its commits: run here, it
  // had to win the write lock from a writer that takes it again at once, and on a busy machine
  // it lost every time (the log grew by everything written for seconds on end).
  if (log > restartFrames) Atomics.store(restartWanted, 0, 1);
}

const timer = setInterval(checkpoint, CHECKPOINT_MS);
parentPort!.postMessage({ ready: true });

parentPort!.on('message', (message: 'close') => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage({ closed: true });
});
