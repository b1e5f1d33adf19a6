// Where the Dapr runtime binaries (daprd, placement, scheduler) are, building
// them first if needed. See dapr/build/README.md.
//
//   import { daprBinDir } from '../dapr/build/bin-dir.ts';
//   const bin = await daprBinDir(); // path.join(bin, 'daprd'), ...
//
// Runs dapr/build/build.sh, which honours GATEPOST_DAPR_BIN_DIR (use these
// binaries, build nothing) and caches builds outside the repository, keyed by
// version; a cached call takes a few milliseconds, a fresh machine pays one build.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DAPR_BINARIES = ['daprd', 'placement', 'scheduler'] as const;

const buildScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'build.sh');

let pending: Promise<string> | undefined;

/**
 * Absolute directory holding `daprd`, `placement` and `scheduler`. The first
 * call in a process runs build.sh (which may compile for several minutes on a
 * fresh machine, printing its progress to stderr); later calls share its answer.
 */
export function daprBinDir(): Promise<string> {
  pending ??= runBuildScript().catch((err: unknown) => {
    pending = undefined; // let a later call try again
    throw err;
  });
  return pending;
}

function runBuildScript(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const stderrTail: string[] = [];
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        stderrTail.push(line);
        if (stderrTail.length > 40) stderrTail.shift();
        // A cache hit is the common case: keep it quiet. Everything else
        // (a build under way, someone else's binaries, errors) is shown.
        if (!line.startsWith('[dapr:build] cached:')) process.stderr.write(line + '\n');
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (partial) stderrTail.push(partial);
      if (code !== 0) {
        reject(new Error(`dapr/build/build.sh failed (${signal ?? `exit ${code}`}):\n${stderrTail.join('\n')}`));
        return;
      }
      const dir = stdout.trim().split('\n').pop() ?? '';
      const missing = DAPR_BINARIES.filter((b) => !existsSync(path.join(dir, b)));
      if (!dir || !path.isAbsolute(dir) || missing.length > 0) {
        reject(
          new Error(
            `dapr/build/build.sh printed ${JSON.stringify(dir)}, which lacks ${missing.join(', ') || 'an absolute path'}`,
          ),
        );
        return;
      }
      resolve(dir);
    });
  });
}
