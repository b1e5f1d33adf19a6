// The writer thread: owns the actor store's write connection. Whatever was posted while it was
// committing is committed next, all of it as one transaction and one fsync, while the event loop
// goes on serving requests.
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { openSqlite } from '../../lib/sqlite.ts';
import { decodeWrites, writeApplier } from './committer.apply.ts';
import type { Committed, Posted } from './committer.ts';

const { file, restartWanted } = workerData as { file: string; restartWanted: Int32Array };
const db = openSqlite(file, null);
// Checkpoints run on the checkpointer thread, never inside a commit (checkpointer.worker.ts).
db.pragma('wal_autocheckpoint = 0');
const apply = writeApplier(db);
const port = parentPort as MessagePort;
port.postMessage({ ready: true });

function close(): void {
  db.close();
  port.postMessage({ closed: true });
}

port.on('message', (first: Posted | 'close') => {
  if (first === 'close') return close();
  // Everything else already waiting joins this transaction.
  const posted = [first];
  let closing = false;
  for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
    const message = next.message as Posted | 'close';
    if (message === 'close') {
      closing = true;
      break;
    }
    posted.push(message);
  }
  const seq = posted[posted.length - 1]!.seq;
  try {
    apply(posted.flatMap((p) => decodeWrites(p.writes)));
    port.postMessage({ seq } satisfies Committed);
  } catch (error) {
    port.postMessage({ seq, error: String((error as Error).stack ?? error) } satisfies Committed);
  }
  // Between two commits, once the answer is out: what the checkpointer has not yet copied (at
  // most CHECKPOINT_MS of commits) is copied, and the next commit writes the log from its start.
  if (Atomics.exchange(restartWanted, 0, 0) === 1) db.pragma('wal_checkpoint(RESTART)');
  if (closing) close();
});
