// Page cursors shared by every catalog implementation: opaque to clients (base64url of a JSON
// array of strings, the sort key of the last row given), so a page ends and resumes the same way
// whichever store answers.
import { GatepostError } from '../errors/errors.catalog.ts';
import type { Page } from './catalog.port.ts';

export const encodeCursor = (parts: string[]): string => Buffer.from(JSON.stringify(parts)).toString('base64url');

/** The error for a cursor this API did not hand out. */
export const badCursor = (): GatepostError =>
  new GatepostError('invalid_request', 'The cursor is not one this API returned.', {
    details: [{ field: 'cursor', message: 'unrecognised cursor' }],
  });

/** The parts of a cursor of `length` strings; null when there is none (the first page). */
export function decodeCursor(cursor: string | undefined, length: number): string[] | null {
  if (!cursor) return null;
  try {
    const parts: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    if (Array.isArray(parts) && parts.length === length && parts.every((p) => typeof p === 'string')) return parts;
  } catch {
    // fall through to the error below
  }
  throw badCursor();
}

/**
 * A page of a keyset query that asked for one row past `limit`: that row's presence says a next
 * page exists, and the page's last row (as `map` makes it) is where the next one starts.
 */
export function pageOf<T>(rows: T[], limit: number, keyOf: (last: T) => string[]): Page<T>;
export function pageOf<R, T>(rows: R[], limit: number, keyOf: (last: T) => string[], map: (row: R) => T): Page<T>;
export function pageOf<R, T>(rows: R[], limit: number, keyOf: (last: T) => string[], map?: (row: R) => T): Page<T> {
  const data = rows.slice(0, limit).map((r) => (map ? map(r) : (r as unknown as T)));
  const last = data[data.length - 1];
  return { data, next_cursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}
