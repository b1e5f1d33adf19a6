// Runs the built `gatepost` CLI as a child process, the way a shell does: the CLI compiled with tsc
// (as `npm run build` compiles it) into a folder of the checkout, so that its packages resolve.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

let built: string | null = null;
let buildDir: string | null = null;

/** Compiles cli/main.ts and what it imports (the SDK); answers the path of main.js. */
export function buildCli(): string {
  if (built) return built;
  const out = (buildDir = join(ROOT, '.vitest-tmp', `cli-${process.pid}-${Date.now()}`));
  mkdirSync(out, { recursive: true });
  const tsconfig = join(out, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { noEmit: false, rewriteRelativeImportExtensions: true, outDir: out, rootDir: ROOT },
      include: [],
      files: [join(ROOT, 'cli/main.ts')],
    }),
  );
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { stdio: 'inherit' });
  built = join(out, 'cli/main.js');
  return built;
}

/** Removes the build (a test file's afterAll). */
export function removeCliBuild(): void {
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
  built = buildDir = null;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `gatepost ...args` to its end, with the environment given (and no GATEPOST_* of the test's own). */
export function gatepost(args: string[], env: Record<string, string> = {}, opts: { cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [buildCli(), ...args],
      { env: { PATH: process.env.PATH, ...env }, cwd: opts.cwd ?? ROOT, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Starts `gatepost ...args` and leaves it running: its output so far, and a way to wait for a line. */
export function startGatepostCli(args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [buildCli(), ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    out,
    exited,
    /** The first stdout line `match` accepts, once it is printed. */
    line(match: (line: string) => boolean): Promise<string> {
      return new Promise((resolve, reject) => {
        const look = () => {
          // Whole lines only: a chunk may end mid-line.
          const found = out.stdout.split('\n').slice(0, -1).find(match);
          if (found !== undefined) {
            child.stdout!.off('data', look);
            resolve(found);
          }
        };
        child.stdout!.on('data', look);
        child.on('exit', (code) => reject(new Error(`gatepost exited (${code}) first:\n${out.stdout}\n${out.stderr}`)));
        look();
      });
    },
  };
}
