// The writer thread: owns a store's write connection. Whatever was posted while it was committing
// is committed next, all of it as one transaction and one fsync, while the event loop goes on
// serving requests. What the writes mean is the applier module's (committer.ts).
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { openSqlite } from './sqlite.ts';
import type { Applier, Committed, Posted } from './committer.ts';
import { lowerThreadPriority } from './worker.ts';

const { file, applier, restartWanted } = workerData as { file: string; applier: string; restartWanted: Int32Array };
const db = openSqlite(file, null);
// The event loop hands this thread its work: it must not take the core from it (lib/worker.ts).
lowerThreadPriority();
// Checkpoints run on the checkpointer thread, never inside a commit (checkpointer.worker.ts).
db.pragma('wal_autocheckpoint = 0');
const store = ((await import(applier)) as { applier: Applier }).applier(db);
const port = parentPort as MessagePort;
port.postMessage({ ready: true });

/** How long the writer waits with nothing to commit before it does its store's deferred work. */
const IDLE_MS = 100;
let idleTimer: NodeJS.Timeout | undefined;

/**
 * The store's deferred work waits until no write has come for IDLE_MS, then runs a part at a time;
 * a write that arrives meanwhile is committed after the part under way, and the wait starts again.
 * A part that fails (the file held by another connection past its busy timeout) is tried again
 * after IDLE_MS: it was deferred, not lost, and a fault that lasts fails the next commit, which
 * is where the store hears of it. The timer keeps no process alive: the thread itself is unref'd
 * while it has nothing posted.
 */
function idleAfterThis(): void {
  const whenIdle = store.whenIdle;
  if (!whenIdle) return;
  clearTimeout(idleTimer);
  const part = () => {
    let more: boolean;
    try {
      more = whenIdle.call(store);
    } catch {
      idleTimer = setTimeout(part, IDLE_MS);
      return;
    }
    idleTimer = more ? setTimeout(part, 0) : undefined;
  };
  idleTimer = setTimeout(part, IDLE_MS);
}

function close(): void {
  clearTimeout(idleTimer);
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
    store.apply(posted.length === 1 ? first.writes : posted.flatMap((p) => p.writes));
    port.postMessage({ seq } satisfies Committed);
  } catch (error) {
    port.postMessage({ seq, error: String((error as Error).stack ?? error) } satisfies Committed);
  }
  // Between two commits, once the answer is out: what the checkpointer has not yet copied (at
  // most CHECKPOINT_MS of commits) is copied, and the next commit writes the log from its start.
  if (Atomics.exchange(restartWanted, 0, 0) === 1) db.pragma('wal_checkpoint(RESTART)');
  if (closing) close();
  else idleAfterThis();
});
idleAfterThis();
