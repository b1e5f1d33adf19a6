// Sandbox captures go through Gatepost's one group-commit writer (lib/committer.ts), on the
// catalog's file. A capture is durable (fsync) before putCapture resolves; the commit's fsync is
// off the event loop, where under load it took about a fifth of its time (bench:ingress profile),
// and captures that arrive while a group is being written go together as the next group.
import type { Applier, EncodedWrites } from '../../lib/committer.ts';
import type { CapturedMessage } from '../catalog.port.ts';

/** A capture as the writer is posted it: one row of the captures table, flat. */
export function captureWrites(c: CapturedMessage): EncodedWrites {
  return [c.tenant_id, c.message_id, c.captured_at, JSON.stringify(c)];
}

/** The writer thread's entry: each group's rows in one transaction (a capture kept once a message). */
export const applier: Applier = (db) => {
  const insert = db.prepare(
    'INSERT INTO captures (tenant_id, message_id, captured_at, body) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  return db.transaction((writes: EncodedWrites) => {
    for (let i = 0; i < writes.length; i += 4) insert.run(writes[i], writes[i + 1], writes[i + 2], writes[i + 3]);
  });
};
