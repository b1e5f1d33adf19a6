// For the SDK test files of other languages (sdk/<lang>/<lang>.sdk.test.ts): a Gatepost with an
// SMTP relay (so live sends are delivered and get receipts) that lets webhooks reach loopback,
// where a language's test runs its receiver; the language's runner as a child process; and the
// check of an SDK's operations table against the served OpenAPI document.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startGatepost, type GatepostProcess } from './gatepost.harness.ts';
import { startRelay, type Relay } from './relay.harness.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface SdkTarget {
  gp: GatepostProcess;
  relay: Relay;
  /** What a language's tests are given: the URL and a fresh tenant's keys. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startSdkTarget(): Promise<SdkTarget> {
  const relay = await startRelay();
  const gp = await startGatepost({
    relayUrl: relay.url,
    env: { GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1', GATEPOST_WEBHOOK_RETRY: '300ms,300ms,300ms' },
  });
  const tenant = await gp.tenant();
  return {
    gp,
    relay,
    env: { GATEPOST_URL: gp.url, GATEPOST_LIVE_KEY: tenant.live, GATEPOST_SANDBOX_KEY: tenant.sandbox },
    close: async () => {
      await gp.dispose();
      await relay.close();
    },
  };
}

export interface RunResult {
  code: number | null;
  output: string;
}

/**
 * Runs a command to its end, without blocking this process (the relay runs in it), and answers
 * its exit code and its stdout and stderr together.
 */
export function run(command: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

export interface Operation {
  name: string;
  method: string;
  path: string;
}

/** The operations of `table` that the OpenAPI document does not have, with that method at that path. */
export function missingFromOpenApi(table: Operation[], doc: { paths: Record<string, Record<string, unknown>> }): Operation[] {
  return table.filter((op) => doc.paths[op.path]?.[op.method.toLowerCase()] === undefined);
}
