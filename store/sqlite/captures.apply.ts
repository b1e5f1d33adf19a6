// Sandbox captures go through Gatepost's one group-commit writer (lib/committer.ts), on the
// catalog's file. A capture is durable (fsync) before putCapture resolves; the commit's fsync is
// off the event loop, where under load it took about a fifth of its time (bench:ingress profile),
// and captures that arrive while a group is being written go together as the next group.
//
// Each capture is also indexed for the inbox's search (migrations/004_inbox.sql): the text part,
// or the html's words when the sender gave none, taken here on the writer's thread, so capturing
// costs the event loop nothing more.
import type { Applier, EncodedWrites } from '../../lib/committer.ts';
import { htmlWords } from '../../mail/content.ts';
import type { CapturedMessage } from '../catalog.port.ts';

/** Fields one capture posts to the writer. */
const FIELDS = 9;

/** A capture as the writer is posted it: its row of the captures table, then what its search indexes. */
export function captureWrites(c: CapturedMessage): EncodedWrites {
  const searched = c.text === null ? [c.html, 1] : [c.text, 0];
  return [c.tenant_id, c.message_id, c.captured_at, c.key_id, JSON.stringify(c), c.to, c.subject, ...searched];
}

/** The writer thread's entry: each group's rows in one transaction (a capture kept once a message). */
export const applier: Applier = (db) => {
  const insert = db.prepare(
    'INSERT INTO captures (tenant_id, message_id, captured_at, key_id, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const index = db.prepare(
    'INSERT INTO captures_search (tenant_id, key_id, recipient, subject, body, message_id) VALUES (?, ?, ?, ?, ?, ?)',
  );
  return db.transaction((writes: EncodedWrites) => {
    for (let i = 0; i < writes.length; i += FIELDS) {
      const [tenant, id, at, key, body, to, subject, searched, isHtml] = writes.slice(i, i + FIELDS);
      if (insert.run(tenant, id, at, key, body).changes === 0) continue;
      index.run(tenant, key, to, subject, isHtml === 1 ? htmlWords(searched as string) : searched, id);
    }
  });
};
