// Opening a SQLite file the way every Gatepost store wants it, and applying its numbered
// migrations (NNN_name.sql, in order, each once; the applied ones are kept in user_version).
import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type Db = Database.Database;

/** Opens (creating) the file; applies the migrations in `migrationsDir` unless it is null. */
export function openSqlite(file: string, migrationsDir: string | null): Db {
  // The owner's alone: databases hold keys' hashes, webhook secrets and every message.
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database's mode.
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // FULL: every commit is fsynced before it returns; a 202 must survive power loss, not only a crash.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  if (migrationsDir) migrate(db, migrationsDir);
  return db;
}

/** Applies the migrations of `dir` not yet applied. */
function migrate(db: Db, dir: string): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  const files = readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort();
  for (const file of files) {
    const version = Number(file.slice(0, 3));
    if (version <= applied) continue;
    const sql = readFileSync(join(dir, file), 'utf8');
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    })();
  }
}
