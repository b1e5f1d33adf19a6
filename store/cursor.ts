// Page cursors shared by every catalog implementation: opaque to clients (base64url of a JSON
// array of strings, the sort key of the last row given), so a page ends and resumes the same way
// whichever store answers.
import { GatepostError } from '../errors/errors.catalog.ts';

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
