// Shared pieces of the embedded runtime's tests: a runtime on a fresh temp file, a read-only
// second connection to look at what is really on disk, polling and a controllable promise.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ActorDefinition, Subscriber } from '../runtime.port.ts';
import { EmbeddedRuntime, type EmbeddedRuntimeOptions } from './runtime.sqlite.ts';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries `check` until it stops throwing (or returns a non-false value); fails with its last error. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5000, intervalMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value === false) throw new Error('eventually: the check returned false');
      return value;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await sleep(intervalMs);
  }
}

export interface Harness {
  readonly file: string;
  readonly logs: { message: string; error?: unknown }[];
  /** A new runtime on the harness file, with `actors` registered and `subscribers` subscribed, started. */
  start(opts?: {
    actors?: ActorDefinition<any>[];
    subscribers?: Record<string, Subscriber>;
    options?: Omit<EmbeddedRuntimeOptions, 'file'>;
  }): Promise<EmbeddedRuntime>;
  /** Runs `fn` on a read-only connection of its own to the file, and closes it. */
  read<T>(fn: (db: Database.Database) => T): T;
  /** The JSON value of `key` of (type, id) in actor_state on disk, or undefined. */
  stateOnDisk(type: string, id: string, key: string): unknown;
  /** Stops every runtime still running and removes the directory. */
  cleanup(): Promise<void>;
}

export function harness(): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'gatepost-embedded-'));
  const file = join(dir, 'actors.sqlite');
  const runtimes: EmbeddedRuntime[] = [];
  const logs: { message: string; error?: unknown }[] = [];
  const h: Harness = {
    file,
    logs,
    async start({ actors = [], subscribers = {}, options = {} } = {}) {
      const rt = new EmbeddedRuntime({ file, log: (message, error) => logs.push({ message, error }), ...options });
      runtimes.push(rt);
      for (const a of actors) rt.register(a);
      for (const [topic, s] of Object.entries(subscribers)) rt.subscribe(topic, s);
      await rt.start();
      return rt;
    },
    read(fn) {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return fn(db);
      } finally {
        db.close();
      }
    },
    stateOnDisk(type, id, key) {
      const row = h.read(
        (db) =>
          db.prepare('SELECT value FROM actor_state WHERE actor_type = ? AND actor_id = ? AND key = ?').get(type, id, key) as
            { value: string } | undefined,
      );
      return row === undefined ? undefined : JSON.parse(row.value);
    },
    async cleanup() {
      await Promise.allSettled(runtimes.map((rt) => rt.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
