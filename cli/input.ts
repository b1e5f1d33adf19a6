// What a user hands the CLI besides flags: files and JSON, each failure a usage error (exit 2)
// that names what could not be read.
import { readFileSync } from 'node:fs';
import { UsageError } from './context.ts';

/** A file's text, or a usage error naming it. */
export function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export function jsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${what} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}
