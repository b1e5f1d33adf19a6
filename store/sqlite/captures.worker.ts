// The capture writer's thread: its own connection to the catalog file; each group it is sent is
// one transaction and one fsync.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../lib/sqlite.ts';
import type { CaptureRow } from './captures.writer.ts';

const db = openSqlite((workerData as { file: string }).file, null);
const insert = db.prepare(
  'INSERT INTO captures (tenant_id, message_id, captured_at, body) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
);
const write = db.transaction((rows: CaptureRow[]) => {
  for (const row of rows) insert.run(...row);
});
parentPort!.postMessage({ ready: true });

parentPort!.on('message', (rows: CaptureRow[] | 'close') => {
  if (rows === 'close') {
    db.close();
    process.exit(0);
  }
  try {
    write(rows);
    parentPort!.postMessage({ done: true });
  } catch (error) {
    parentPort!.postMessage({ done: true, error: String((error as Error).stack ?? error) });
  }
});
