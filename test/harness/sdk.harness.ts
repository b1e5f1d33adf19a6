// What each language SDK's test file (sdk/<lang>/<lang>.sdk.test.ts) shares: a Gatepost with a
// real SMTP relay (so a live send is delivered and gets a receipt) whose SSRF guard lets
// webhooks reach the language test's own receiver on loopback, and a tenant; a second tenant with
// a message its inbound MX received (for the raw downloads); a way to run the
// language's test runner as a child process, its output kept for the failure message; and the
// check of an SDK's operations table against the served OpenAPI document.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect } from 'vitest';
import { GatepostError } from '../../sdk/node/index.ts';
import { startDns } from './dns.harness.ts';
import { startGatepost, type GatepostProcess } from './gatepost.harness.ts';
import { publishSenders, receiveInbound, type ReceivedInbound } from './inbound.harness.ts';
import { startRelay, type Relay } from './relay.harness.ts';

export interface SdkSuite {
  gp: GatepostProcess;
  relay: Relay;
  tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;
  inbound: ReceivedInbound;
  /**
   * The environment a language test reads: GATEPOST_URL and the tenant's keys; the live key of
   * the inbound tenant (GATEPOST_INBOUND_KEY), the id of the message it received
   * (GATEPOST_INBOUND_ID) and the file that was sent (GATEPOST_INBOUND_EML).
   */
  env: Record<string, string>;
}

export function gatepostForSdk(): SdkSuite {
  const suite = {} as SdkSuite;
  beforeAll(async () => {
    suite.relay = await startRelay();
    // DNS answers only while the inbound domain is verified and its mail received: closed then,
    // so the language tests meet DNS as every other SDK test does (no server: `dns_unavailable`).
    const dns = await startDns();
    publishSenders(dns);
    suite.gp = await startGatepost({
      relayUrl: suite.relay.url,
      // Retries a test's receiver sees within moments, not minutes.
      env: {
        GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1',
        GATEPOST_WEBHOOK_RETRY: '300ms,300ms,300ms',
        GATEPOST_DNS_SERVERS: dns.address,
      },
    });
    suite.tenant = await suite.gp.tenant();
    // Another tenant, so the first one's inbound routes and messages stay empty.
    const receiver = await suite.gp.tenant();
    try {
      suite.inbound = await receiveInbound(suite.gp, dns, receiver.live, 'inbound.test');
    } finally {
      await dns.close();
    }
    suite.env = {
      GATEPOST_URL: suite.gp.url,
      GATEPOST_LIVE_KEY: suite.tenant.live,
      GATEPOST_SANDBOX_KEY: suite.tenant.sandbox,
      GATEPOST_INBOUND_KEY: receiver.live,
      GATEPOST_INBOUND_ID: suite.inbound.id,
      GATEPOST_INBOUND_EML: suite.inbound.path,
    };
  });
  afterAll(async () => {
    await suite.gp?.dispose();
    await suite.relay?.close();
  });
  return suite;
}

export interface Run {
  code: number | null;
  stdout: string;
  /** stdout and stderr as they came, to show when the run failed. */
  output: string;
}

/** Runs a command to its end, bounded by `timeoutMs` (then killed: a hang is a failure, not a wait). */
export function run(
  command: string,
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 170_000,
    });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (c: Buffer) => ((stdout += c.toString()), (output += c.toString())));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, output }));
  });
}

export interface SdkOperation {
  method: string;
  path: string;
}

/**
 * The operations an SDK claims that the OpenAPI document does not have, with the same method and
 * path (as `METHOD /path`); empty when every one exists.
 */
export function missingFromOpenApi(
  operations: SdkOperation[],
  openapi: { paths: Record<string, Record<string, unknown>> },
): string[] {
  return operations
    .filter((op) => openapi.paths[op.path]?.[op.method.toLowerCase()] === undefined)
    .map((op) => `${op.method} ${op.path}`);
}

/** The Node SDK's error a call ends in; the test fails if it succeeds or throws anything else. */
export async function gatepostErrorOf(promise: Promise<unknown>): Promise<GatepostError> {
  const error = await promise.then(
    () => expect.fail('expected a GatepostError'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatepostError);
  return error as GatepostError;
}
