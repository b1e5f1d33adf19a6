// POST /v1/emails under load from Debian's wrk (one thread, send.wrk.lua), as bench:send measures
// single sends; bench:broadcast measures them the same way, to set a broadcast's fan-out beside them.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface LoadResult {
  seconds: number;
  accepted: number;
  non2xx: number;
  errors: number;
  /** Latency percentiles and maximum, ms: of the 202 answers (autocannon) or of every answer (wrk). */
  latency: { p50: number; p99: number; max: number };
  /** The ids in the 202 answers. */
  ids: string[];
}

const run = promisify(execFile);

/** Installs Debian's wrk if it is missing. */
export function ensureWrk(): void {
  execFileSync('sh', ['-c', 'command -v wrk > /dev/null || (apt-get update -qq && apt-get install -y -qq wrk)'], {
    stdio: 'inherit',
  });
}

/**
 * The load from wrk, one thread: each request's body is `body` with "{N}" made a tag of its own
 * (starting with `label`, so runs differ), and wrk writes the figures and every 202's id to a file
 * at the end.
 */
export async function wrkLoad(o: {
  url: string;
  key: string;
  seconds: number;
  connections: number;
  body: string;
  label: string;
}): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-send-wrk-'));
  const out = join(dir, 'out');
  try {
    await run(
      'wrk',
      ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '-s', join(import.meta.dirname, 'send.wrk.lua'), o.url, '--', o.label],
      { env: { ...process.env, WRK_BODY: o.body, WRK_KEY: o.key, WRK_OUT: out } },
    );
    const lines = readFileSync(out, 'utf8').split('\n');
    const figure = (name: string) => Number(lines.find((l) => l.startsWith(`${name} `))!.split(' ')[1]);
    const ids = lines.filter((l) => l.startsWith('id ')).map((l) => l.slice(3));
    return {
      seconds: figure('duration_us') / 1e6,
      accepted: ids.length,
      non2xx: figure('non2xx'),
      errors: figure('errors'),
      latency: { p50: figure('p50_us') / 1000, p99: figure('p99_us') / 1000, max: figure('max_us') / 1000 },
      ids,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
