// The catalog's writes that go through Gatepost's one group-commit writer (lib/committer.ts), on
// the catalog's file: sandbox captures, received inbound messages and broadcasts' counted events,
// the three written once per message under load, opens and clicks, many at a time, and a
// broadcast's state after each page of its fan-out. Each is durable (fsync) before its put
// resolves; the commit's fsync is off the event loop, where under load it took about a fifth of
// its time (a capture's in the bench:ingress profile, a received message's in bench:inbound's), and
// writes that arrive while a group is being written go together as the next group.
//
// A capture is indexed for the inbox's search (migrations/004_inbox.sql) off its commit: the
// commit lists it in captures_unindexed, and the writer indexes what is listed, in the order it
// was captured, once it has had nothing to commit for a moment (`whenIdle`), or at once when a
// search asks (INDEX_PENDING), so a search finds every capture committed before it. Indexed with
// each capture, the trigram index took about 40 us of the writer's CPU a capture, a sixth of a
// sandbox send's CPU in bench:send (bench/RESULTS.md, twenty-sixth pass).
import type { Applier, EncodedWrites } from '../../lib/committer.ts';
import type { Db } from '../../lib/sqlite.ts';
import { htmlWords } from '../../mail/content.ts';
import type { BroadcastState, CapturedMessage, EngagementEvent, InboundMessageCreate } from '../catalog.port.ts';
import { INBOUND_MESSAGE_COLUMNS } from '../inbound.rows.ts';

/** Each write starts with its kind, then that kind's fields. */
const CAPTURE = 'capture';
/** Index every capture not yet in the search index (no fields). */
const INDEX_PENDING = 'index_pending';
const INBOUND = 'inbound';
const ENGAGEMENT = 'engagement';
const BROADCAST_EVENT = 'broadcast_event';
const BROADCAST_STATE = 'broadcast_state';
/** Fields after the kind: a capture's; a received message's before its attachments, and each attachment's; an open's or click's; a broadcast's counted event's; a broadcast's state. */
const CAPTURE_FIELDS = 5;
const INBOUND_FIELDS = 10;
const ATTACHMENT_FIELDS = 5;
const ENGAGEMENT_FIELDS = 6;
const BROADCAST_EVENT_FIELDS = 3;
const BROADCAST_STATE_FIELDS = 7;

/** A capture as the writer is posted it: its row of the captures table. */
export function captureWrites(c: CapturedMessage): EncodedWrites {
  return [CAPTURE, c.tenant_id, c.message_id, c.captured_at, c.key_id, JSON.stringify(c)];
}

/** What a search posts first, so that every capture committed before it is in the index. */
export const indexPendingWrites = (): EncodedWrites => [INDEX_PENDING];

/** Captures indexed in one part of the writer's idle work. */
const INDEX_PART = 500;

/** A received message as the writer is posted it: its row (the raw bytes too), its attachments' count, then each one's row. */
export function inboundWrites(m: InboundMessageCreate): EncodedWrites {
  return [
    INBOUND,
    m.id,
    m.tenant_id,
    m.route_id,
    m.mail_from,
    JSON.stringify(m.rcpt_to),
    m.remote_address,
    m.received_at,
    JSON.stringify(m.payload),
    m.raw,
    m.attachments.length,
    ...m.attachments.flatMap((a) => [a.filename, a.content_type, a.size, a.content_id, a.content]),
  ];
}

/** A broadcast's message counted as one kind of event: its row of broadcast_events. */
export function broadcastEventWrites(e: { broadcast_id: string; kind: string; message_id: string }): EncodedWrites {
  return [BROADCAST_EVENT, e.broadcast_id, e.kind, e.message_id];
}

/**
 * A broadcast's state as its actor saves it after a page: the row's new columns. Written on the
 * event loop's connection, the update waited there for the writer's transaction and made its own
 * commit: in a profiled bench:broadcast, 10.7 s of the event loop over its 200 pages, about 50 ms
 * a page (bench/RESULTS.md, thirty-seventh pass).
 */
export function broadcastStateWrites(tenantId: string, id: string, s: BroadcastState, at: string): EncodedWrites {
  return [
    BROADCAST_STATE,
    s.status,
    s.send_at,
    s.paused && JSON.stringify(s.paused),
    JSON.stringify(s.progress),
    at,
    tenantId,
    id,
  ];
}

/** Opens and clicks as the writer is posted them: a row each, in the order they were recorded. */
export function engagementWrites(events: EngagementEvent[]): EncodedWrites {
  return events.flatMap(({ tenant_id, message_id, event }) => [
    ENGAGEMENT,
    event.id,
    message_id,
    tenant_id,
    event.type,
    event.created_at,
    JSON.stringify(event.data),
  ]);
}

/**
 * Indexes the captures listed as not yet indexed, oldest first, at most `limit` of them (null:
 * all); answers whether more are left. (A capture's delete takes its listing too: catalog.sqlite.ts.)
 */
function searchIndexer(db: Db): (limit: number | null) => boolean {
  const listed = db.prepare(
    `SELECT u.seq, c.tenant_id, c.message_id, c.key_id, c.body FROM captures_unindexed u
       JOIN captures c ON c.tenant_id = u.tenant_id AND c.message_id = u.message_id
       ORDER BY u.seq LIMIT ?`,
  );
  const index = db.prepare(
    'INSERT INTO captures_search (tenant_id, key_id, recipient, subject, body, message_id) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const unlist = db.prepare('DELETE FROM captures_unindexed WHERE seq <= ?');
  return (limit) => {
    const rows = listed.all(limit ?? -1) as {
      seq: number;
      tenant_id: string;
      message_id: string;
      key_id: string | null;
      body: string;
    }[];
    for (const row of rows) {
      const c = JSON.parse(row.body) as CapturedMessage;
      index.run(row.tenant_id, row.key_id, c.to, c.subject, c.text ?? htmlWords(c.html), row.message_id);
    }
    if (rows.length > 0) unlist.run(rows[rows.length - 1]!.seq);
    return limit !== null && rows.length === limit;
  };
}

/** The writer thread's entry: each group's writes in one transaction (a capture or a received message kept once). */
export const applier: Applier = (db) => {
  const capture = db.prepare(
    'INSERT INTO captures (tenant_id, message_id, captured_at, key_id, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const unindexed = db.prepare('INSERT INTO captures_unindexed (tenant_id, message_id) VALUES (?, ?)');
  const indexPending = searchIndexer(db);
  const inbound = db.prepare(
    `INSERT INTO inbound_messages (${INBOUND_MESSAGE_COLUMNS}, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const attachment = db.prepare(
    'INSERT INTO inbound_attachments (message_id, n, filename, content_type, size, content_id, content) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const counted = db.prepare(
    'INSERT INTO broadcast_events (broadcast_id, kind, message_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const tally = db.prepare(
    'INSERT INTO broadcast_counts (broadcast_id, kind, n) VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET n = n + 1',
  );
  const broadcastState = db.prepare(
    'UPDATE broadcasts SET status = ?, send_at = ?, paused = ?, progress = ?, updated_at = ? WHERE tenant_id = ? AND id = ?',
  );
  const engagement = db.prepare(
    'INSERT INTO engagement (event_id, message_id, tenant_id, type, created_at, data) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const apply = db.transaction((writes: EncodedWrites) => {
    for (let i = 0; i < writes.length;) {
      if (writes[i] === INDEX_PENDING) {
        indexPending(null);
        i += 1;
      } else if (writes[i] === ENGAGEMENT) {
        engagement.run(writes.slice(i + 1, i + 1 + ENGAGEMENT_FIELDS));
        i += 1 + ENGAGEMENT_FIELDS;
      } else if (writes[i] === BROADCAST_EVENT) {
        const [broadcast, kind, message] = writes.slice(i + 1, i + 1 + BROADCAST_EVENT_FIELDS);
        i += 1 + BROADCAST_EVENT_FIELDS;
        // Counted once: an event told twice inserts nothing the second time.
        if (counted.run(broadcast, kind, message).changes > 0) tally.run(broadcast, kind);
      } else if (writes[i] === BROADCAST_STATE) {
        broadcastState.run(writes.slice(i + 1, i + 1 + BROADCAST_STATE_FIELDS));
        i += 1 + BROADCAST_STATE_FIELDS;
      } else if (writes[i] === CAPTURE) {
        const [tenant, id, at, key, body] = writes.slice(i + 1, i + 1 + CAPTURE_FIELDS);
        i += 1 + CAPTURE_FIELDS;
        if (capture.run(tenant, id, at, key, body).changes === 0) continue;
        unindexed.run(tenant, id);
      } else {
        const [id, tenant, route, from, rcpt, remote, at, payload, raw, count] = writes.slice(i + 1, i + 1 + INBOUND_FIELDS);
        const start = i + 1 + INBOUND_FIELDS;
        i = start + (count as number) * ATTACHMENT_FIELDS;
        const size = (raw as Uint8Array).byteLength;
        if (inbound.run(id, tenant, route, from, rcpt, remote, at, payload, size, raw).changes === 0) continue;
        for (let n = 0; n < (count as number); n++) {
          attachment.run(id, n, ...writes.slice(start + n * ATTACHMENT_FIELDS, start + (n + 1) * ATTACHMENT_FIELDS));
        }
      }
    }
  });
  // IMMEDIATE: the event loop's connection writes the same file (catalog.sqlite.ts), and a part
  // that read the list before that commit could not write after it.
  return { apply: apply.immediate, whenIdle: db.transaction(() => indexPending(INDEX_PART)).immediate };
};
