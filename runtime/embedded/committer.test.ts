// The group committer under a tick with many turns: it posts them to the writer thread in parts,
// so the writer commits the first part while the event loop is still busy with the rest.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../lib/sqlite.ts';
import { encode } from './committer.apply.ts';
import { GroupCommitter } from '../../lib/committer.ts';
import { moduleBeside } from '../../lib/worker.ts';
import { MIGRATIONS_DIR } from './runtime.sqlite.ts';

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

async function committerOnFreshFile(postEvery?: number) {
  const dir = mkdtempSync(join(tmpdir(), 'gatepost-committer-'));
  const file = join(dir, 'actors.sqlite');
  openSqlite(file, MIGRATIONS_DIR).close();
  const committer = new GroupCommitter(
    file,
    moduleBeside(import.meta.url, 'committer.apply'),
    (error) => expect.fail(String(error)),
    {
      postEvery,
    },
  );
  await committer.ready;
  const reader = new Database(file, { readonly: true });
  cleanup = async () => {
    reader.close();
    await committer.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const rows = () => (reader.prepare('SELECT COUNT(*) AS n FROM actor_state').get() as { n: number }).n;
  return { committer, rows };
}

/** Enqueues `n` turns of one row each, then keeps the event loop busy until `done` says so, or `ms` pass. */
function tickOf(committer: GroupCommitter, n: number, done: () => boolean, ms: number): void {
  for (let i = 0; i < n; i++) committer.enqueue(encode.state([], 'box', `b${i}`, 'k', String(i)));
  for (const until = Date.now() + ms; Date.now() < until && !done(););
}

describe('GroupCommitter', () => {
  it('posts every postEvery turns: the writer commits them while the tick is still running', async () => {
    const { committer, rows } = await committerOnFreshFile(16);
    tickOf(committer, 40, () => rows() >= 32, 5000);
    // Two parts of 16 reached the disk before the tick ended; the last 8 go at its end.
    expect(rows()).toBe(32);
    await committer.durable();
    expect(rows()).toBe(40);
  });

  it('posts a tick with fewer turns at its end, all together', async () => {
    const { committer, rows } = await committerOnFreshFile(16);
    // Half a second is ample for a part the writer had been posted to reach the disk.
    tickOf(committer, 15, () => rows() > 0, 500);
    expect(rows()).toBe(0);
    await committer.durable();
    expect(rows()).toBe(15);
  });
});
