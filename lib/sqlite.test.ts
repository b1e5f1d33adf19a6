// A store's files are its owner's alone (issue 20, item 8): the data directory 0700, each database
// and its -wal and -shm files 0600, whatever the umask lets other users read.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from './sqlite.ts';

const made: string[] = [];
afterEach(() => made.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('openSqlite', () => {
  it('creates the data directory 0700 and the database, its -wal and -shm files 0600', () => {
    const parent = mkdtempSync(join(tmpdir(), 'gatepost-modes-'));
    made.push(parent);
    const dir = join(parent, 'data');
    const previous = process.umask(0o022);
    try {
      const db = openSqlite(join(dir, 'catalog.db'), null);
      db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
      expect(readdirSync(dir).sort()).toEqual(['catalog.db', 'catalog.db-shm', 'catalog.db-wal']);
      expect(modeOf(dir)).toBe('700');
      for (const file of readdirSync(dir)) expect(modeOf(join(dir, file)), file).toBe('600');
      db.close();
    } finally {
      process.umask(previous);
    }
  });
});
