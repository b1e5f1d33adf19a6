// Broadcasts as both catalogs store them: one column list, one row shape, one page rule.
import {
  BROADCAST_EVENT_KINDS,
  type Broadcast,
  type BroadcastCreate,
  type BroadcastEventKind,
  type BroadcastFanOut,
  type BroadcastPaused,
  type Page,
} from './catalog.port.ts';
import { pageOf } from './cursor.ts';

// Stored as from_addr (FROM is an SQL keyword), read back under its API name.
export const BROADCAST_COLUMNS =
  'id, tenant_id, name, audience_id, from_addr AS "from", subject, html, text, template, data, sandbox, status, send_at, paused, progress, created_at, updated_at';

/** The columns a new broadcast is written to, in BROADCAST_COLUMNS' order. */
export const BROADCAST_INSERT_COLUMNS =
  'id, tenant_id, name, audience_id, from_addr, subject, html, text, template, data, sandbox, status, send_at, created_at, updated_at';

/** A broadcast as a store returns it: SQLite gives the JSON columns as text and the flag as 0 or 1. */
export type BroadcastRow = Omit<Broadcast, 'data' | 'sandbox' | 'paused' | 'progress'> & {
  data: string | Record<string, unknown>;
  sandbox: number | boolean;
  paused: string | BroadcastPaused | null;
  progress: string | BroadcastFanOut | null;
};

const parsed = <T>(value: string | T): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

export const broadcastOf = (row: BroadcastRow): Broadcast => ({
  ...row,
  data: parsed(row.data),
  sandbox: Boolean(row.sandbox),
  paused: row.paused === null ? null : parsed(row.paused),
  progress: row.progress === null ? null : parsed(row.progress),
});

/** A new broadcast as both catalogs create it: a draft, nothing scheduled or sent yet. */
export const draftBroadcast = (b: BroadcastCreate, at: string): Broadcast => ({
  ...b,
  status: 'draft',
  send_at: null,
  paused: null,
  progress: null,
  created_at: at,
  updated_at: at,
});

/** A new broadcast's row values, in BROADCAST_INSERT_COLUMNS' order. */
export const broadcastValues = (b: Broadcast, sandbox: number | boolean): unknown[] => [
  b.id,
  b.tenant_id,
  b.name,
  b.audience_id,
  b.from,
  b.subject,
  b.html,
  b.text,
  b.template,
  JSON.stringify(b.data),
  sandbox,
  b.status,
  b.send_at,
  b.created_at,
  b.updated_at,
];

/** A page of broadcasts newest first, from the `limit + 1` rows asked for: its cursor is the last one's time and id. */
export function broadcastPage(rows: BroadcastRow[], limit: number): Page<Broadcast> {
  return pageOf(rows, limit, (last) => [last.created_at, last.id], broadcastOf);
}

/** Every kind's count, zero where none was counted. */
export function countsOf(rows: { kind: string; n: number | string }[]): Record<BroadcastEventKind, number> {
  const counts = Object.fromEntries(BROADCAST_EVENT_KINDS.map((k) => [k, 0])) as Record<BroadcastEventKind, number>;
  for (const r of rows) if (r.kind in counts) counts[r.kind as BroadcastEventKind] = Number(r.n);
  return counts;
}
