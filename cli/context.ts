// What every command shares: the client made from the global options and the environment, how
// results are printed (lines for people, JSON with --json), and how failures end the process
// with an exit code scripts can use.
import type { Command } from 'commander';
import { Gatepost, GatepostError } from '../sdk/node/index.ts';

export const EXIT = {
  ok: 0,
  /** Gatepost refused or failed the call, or could not be reached; a receipt that does not verify. */
  api: 1,
  /** A bad flag, a missing argument or API key, a file that cannot be read. */
  usage: 2,
} as const;

/** A failure that is the caller's: printed on one line, exit 2. */
export class UsageError extends Error {}

export interface GlobalOptions {
  apiKey?: string;
  url?: string;
  json?: boolean;
}

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

/** The client for the key of --api-key or GATEPOST_API_KEY, at --url or GATEPOST_URL. */
export function clientOf(cmd: Command): Gatepost {
  const { apiKey, url } = globals(cmd);
  const key = apiKey ?? process.env.GATEPOST_API_KEY;
  if (!key) throw new UsageError('no API key: set GATEPOST_API_KEY or pass --api-key');
  return new Gatepost({ apiKey: key, baseUrl: url ?? process.env.GATEPOST_URL });
}

/** Prints `value` as JSON with --json, else the lines `human` makes of it. */
export function print<T>(cmd: Command, value: T, human: (value: T) => string | string[]): void {
  if (globals(cmd).json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const lines = human(value);
  const text = Array.isArray(lines) ? lines.join('\n') : lines;
  if (text) process.stdout.write(`${text}\n`);
}

/** Rows as aligned columns. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** Writes the failure on one line (JSON with --json) and answers the exit code. */
export function report(error: unknown, json: boolean): number {
  if (error instanceof UsageError) {
    process.stderr.write(`gatepost: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof GatepostError) {
    if (json) {
      const body = { error: { code: error.code, message: error.message, status: error.status, details: error.details } };
      process.stderr.write(`${JSON.stringify(body)}\n`);
    } else {
      const details = error.details.map((d) => `${d.field}: ${d.message}`).join('; ');
      process.stderr.write(`gatepost: ${error.code}: ${error.message}${details ? ` (${details})` : ''}\n`);
    }
    return EXIT.api;
  }
  process.stderr.write(`gatepost: ${(error as Error).message}\n`);
  return EXIT.api;
}
