// The catalog contract against SQLite: a fresh file in a temporary directory, removed afterwards.
import Database from 'better-sqlite3';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { catalogContract } from '../catalog.contract.ts';
import { sealedSecretsContract } from '../catalog.sealed.contract.ts';
import { openSqlite, type Db } from '../../lib/sqlite.ts';
import type { CapturedMessage } from '../catalog.port.ts';
import { SqliteCatalog } from './catalog.sqlite.ts';

catalogContract('SQLite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  return {
    catalog,
    cleanup: async () => {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

// Captures go through the group-commit writer (lib/committer.ts); a commit that fails refuses its
// captures, and the next capture starts a new writer.
it('refuses the captures of a failed commit, and captures again once the store can take them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const file = join(dir, 'catalog.db');
  const catalog = new SqliteCatalog(file);
  const other = new Database(file);
  const capture = (message_id: string) =>
    catalog.putCapture({
      message_id,
      tenant_id: 'ten_a',
      key_id: null,
      from: 'a@sender.example',
      to: 'b@example.com',
      subject: 'S',
      html: '<p>h</p>',
      text: null,
      headers: {},
      captured_at: new Date().toISOString(),
      dkim: null,
      source: null,
    });
  const ids = async () => (await catalog.listCaptures('ten_a', { limit: 10 })).data.map((c) => c.message_id).sort();
  try {
    await capture('msg_1');
    other.exec('ALTER TABLE captures RENAME TO captures_away');
    await expect(capture('msg_2')).rejects.toThrow(/could not commit/);
    other.exec('ALTER TABLE captures_away RENAME TO captures');
    await capture('msg_3');
    expect(await ids()).toEqual(['msg_1', 'msg_3']);
  } finally {
    other.close();
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});

sealedSecretsContract('SQLite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const file = join(dir, 'catalog.db');
  return {
    open: async (sealer) => new SqliteCatalog(file, sealer),
    rawDomainKeys: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return (
          db.prepare('SELECT rsa_private, ed_private FROM domains').all() as { rsa_private: string; ed_private: string }[]
        ).flatMap((r) => [r.rsa_private, r.ed_private]);
      } finally {
        db.close();
      }
    },
    rawSecrets: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return (
          db.prepare('SELECT secret, previous_secret FROM webhooks').all() as { secret: string; previous_secret: string | null }[]
        )
          .flatMap((r) => [r.secret, r.previous_secret])
          .filter((v) => v !== null);
      } finally {
        db.close();
      }
    },
    rawReceiptKeys: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare('SELECT private_key FROM receipt_keys').all() as { private_key: string }[]).map((r) => r.private_key);
      } finally {
        db.close();
      }
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

/** A catalog file in a fresh directory with the migrations before `migration` applied, open, and its directory. */
async function catalogBefore(migration: string): Promise<{ dir: string; file: string; old: Db }> {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const file = join(dir, 'catalog.db');
  const before = join(dir, 'migrations');
  await mkdir(before);
  const all = fileURLToPath(new URL('./migrations', import.meta.url));
  for (const name of (await readdir(all)).filter((f) => f < migration)) await copyFile(join(all, name), join(before, name));
  return { dir, file, old: openSqlite(file, before) };
}

// Migration 004 (the hosted inbox) over a catalog holding captures from before it: they keep
// their place, have no key, and are found by a search (their html standing for their text).
it('indexes the captures made before the inbox migration, in the order they were captured', async () => {
  const { dir, file, old } = await catalogBefore('004');
  const put = old.prepare('INSERT INTO captures (tenant_id, message_id, captured_at, body) VALUES (?, ?, ?, ?)');
  const body = (id: string, at: string, html: string) =>
    JSON.stringify({
      message_id: id,
      tenant_id: 'ten_a',
      from: 'a@x',
      to: 'ann@example.com',
      subject: 'Old',
      html,
      text: null,
      headers: {},
      captured_at: at,
    });
  put.run('ten_a', 'msg_2', '2024-01-02T00:00:00.000Z', body('msg_2', '2024-01-02T00:00:00.000Z', '<p>second parcel</p>'));
  put.run('ten_a', 'msg_1', '2024-01-01T00:00:00.000Z', body('msg_1', '2024-01-01T00:00:00.000Z', '<p>first parcel</p>'));
  old.close();

  const catalog = new SqliteCatalog(file);
  try {
    expect(await catalog.getCapture('ten_a', 'msg_1')).toMatchObject({ key_id: null, dkim: null, source: null });
    const found = await catalog.listCaptures('ten_a', { limit: 10, search: 'parcel' });
    expect(found.data.map((c) => c.message_id)).toEqual(['msg_2', 'msg_1']);
    expect((await catalog.listCaptures('ten_a', { limit: 10, search: 'second' })).data.map((c) => c.message_id)).toEqual([
      'msg_2',
    ]);
    expect((await catalog.listCaptures('ten_a', { limit: 10, key_id: 'key_a' })).data).toEqual([]);
  } finally {
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// Migration 017 (counts kept beside broadcast_events) over a catalog holding events from before
// it: each broadcast's counts are those events, and counting goes on from them.
it('counts the broadcast events made before the counts migration, and those told since', async () => {
  const { dir, file, old } = await catalogBefore('017');
  const event = old.prepare('INSERT INTO broadcast_events (broadcast_id, kind, message_id) VALUES (?, ?, ?)');
  for (const [broadcast, kind, message] of [
    ['bro_a', 'sent', 'msg_1'],
    ['bro_a', 'sent', 'msg_2'],
    ['bro_a', 'opened', 'msg_1'],
    ['bro_b', 'sent', 'msg_3'],
  ]) {
    event.run(broadcast, kind, message);
  }
  old.close();

  const catalog = new SqliteCatalog(file);
  try {
    const zero = { sent: 0, bounced: 0, opened: 0, clicked: 0, unsubscribed: 0, complained: 0 };
    expect(await catalog.broadcastCounts('bro_a')).toEqual({ ...zero, sent: 2, opened: 1 });
    await catalog.countBroadcastEvent({ broadcast_id: 'bro_a', kind: 'sent', message_id: 'msg_2' });
    await catalog.countBroadcastEvent({ broadcast_id: 'bro_a', kind: 'clicked', message_id: 'msg_2' });
    await catalog.countBroadcastEvent({ broadcast_id: 'bro_b', kind: 'sent', message_id: 'msg_4' });
    expect(await catalog.broadcastCounts('bro_a')).toEqual({ ...zero, sent: 2, opened: 1, clicked: 1 });
    expect(await catalog.broadcastCounts('bro_b')).toEqual({ ...zero, sent: 2 });
  } finally {
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// Migration 018 (captures in a rowid table) over a catalog holding captures: each is found as
// before, the inbox pages newest first, one key's inbox alone, and a capture put again is one capture.
it('keeps the captures made before the rowid migration, newest first, by key and once each', async () => {
  const { dir, file, old } = await catalogBefore('018');
  const put = old.prepare('INSERT INTO captures (tenant_id, message_id, captured_at, key_id, body) VALUES (?, ?, ?, ?, ?)');
  const capture = (n: number): CapturedMessage => ({
    message_id: `msg_${n}`,
    tenant_id: 'ten_a',
    key_id: n % 2 === 0 ? 'key_even' : 'key_odd',
    from: 'a@sender.example',
    to: 'ann@example.com',
    subject: `Parcel ${n}`,
    html: `<p>parcel ${n}</p>`,
    text: null,
    headers: {},
    captured_at: `2024-01-0${n}T00:00:00.000Z`,
    dkim: null,
    source: null,
  });
  for (const n of [3, 1, 4, 2])
    put.run('ten_a', `msg_${n}`, capture(n).captured_at, capture(n).key_id, JSON.stringify(capture(n)));
  old.close();

  const catalog = new SqliteCatalog(file);
  try {
    expect(await catalog.getCapture('ten_a', 'msg_3')).toEqual(capture(3));
    const first = await catalog.listCaptures('ten_a', { limit: 3 });
    expect(first.data.map((c) => c.message_id)).toEqual(['msg_4', 'msg_3', 'msg_2']);
    const rest = await catalog.listCaptures('ten_a', { limit: 3, cursor: first.next_cursor! });
    expect(rest.data.map((c) => c.message_id)).toEqual(['msg_1']);
    expect((await catalog.listCaptures('ten_a', { limit: 10, key_id: 'key_odd' })).data.map((c) => c.message_id)).toEqual([
      'msg_3',
      'msg_1',
    ]);
    await catalog.putCapture({ ...capture(5), captured_at: '2024-01-05T00:00:00.000Z' });
    await catalog.putCapture({ ...capture(5), captured_at: '2024-01-06T00:00:00.000Z' });
    const all = await catalog.listCaptures('ten_a', { limit: 10 });
    expect(all.data.map((c) => [c.message_id, c.captured_at])).toEqual([
      ['msg_5', '2024-01-05T00:00:00.000Z'],
      ...[4, 3, 2, 1].map((n) => [`msg_${n}`, capture(n).captured_at]),
    ]);
    expect((await catalog.listCaptures('ten_a', { limit: 10, search: 'parcel 5' })).data.map((c) => c.message_id)).toEqual([
      'msg_5',
    ]);
  } finally {
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// The catalog answers "not suppressed" without a query for an address its filter never saw: the
// filter is read from the file at start, so suppressions written before a restart are found.
it('finds the suppressions written before it was opened, and those written since', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const file = join(dir, 'catalog.db');
  const suppression = (tenant_id: string, address: string) => ({
    tenant_id,
    address,
    reason: 'manual' as const,
    detail: null,
    created_at: '2024-03-01T12:00:00.000Z',
  });
  const first = new SqliteCatalog(file);
  for (let i = 0; i < 500; i++) await first.putSuppression(suppression('ten_a', `gone${i}@example.com`));
  await first.close();

  const catalog = new SqliteCatalog(file);
  try {
    for (let i = 0; i < 500; i++) expect(await catalog.getSuppression('ten_a', `gone${i}@example.com`)).not.toBeNull();
    expect(await catalog.getSuppression('ten_b', 'gone1@example.com')).toBeNull();
    expect(await catalog.getSuppression('ten_a', 'here@example.com')).toBeNull();
    await catalog.putSuppression(suppression('ten_a', 'here@example.com'));
    expect(await catalog.getSuppression('ten_a', 'here@example.com')).toMatchObject({ address: 'here@example.com' });
    await catalog.deleteSuppression('ten_a', 'gone1@example.com');
    expect(await catalog.getSuppression('ten_a', 'gone1@example.com')).toBeNull();
  } finally {
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// A capture is indexed for the inbox's search off its commit (catalog.apply.ts): by the writer once
// it has nothing to commit, or before a search. Every search finds every capture made before it.
/** A capture of tenant ten_a's key key_a, with the content given. */
const captureOf = (catalog: SqliteCatalog, message_id: string, content: Pick<CapturedMessage, 'subject' | 'html' | 'text'>) =>
  catalog.putCapture({
    message_id,
    tenant_id: 'ten_a',
    key_id: 'key_a',
    from: 'a@sender.example',
    to: 'b@example.com',
    ...content,
    headers: {},
    captured_at: new Date().toISOString(),
    dkim: null,
    source: null,
  });

it('indexes captures once the writer is idle, and before a search those it has not reached', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const file = join(dir, 'catalog.db');
  const reader = () => new Database(file, { readonly: true });
  const capture = (catalog: SqliteCatalog, message_id: string, text: string) =>
    captureOf(catalog, message_id, { subject: 'Order', html: `<p>${text}</p>`, text: message_id.endsWith('0') ? text : null });
  const found = async (catalog: SqliteCatalog, search: string) =>
    (await catalog.listCaptures('ten_a', { limit: 100, search, key_id: 'key_a' })).data.map((c) => c.message_id);
  let catalog = new SqliteCatalog(file);
  try {
    for (let i = 0; i < 30; i++) await capture(catalog, `msg_${i}`, `parcel number${i}`);
    // Indexed with nothing asking: the list empties and the index holds all thirty.
    const db = reader();
    await expect
      .poll(() => db.prepare('SELECT (SELECT count(*) FROM captures_unindexed) AS listed, (SELECT count(*) FROM captures_search) AS indexed').get(), { timeout: 10_000 })
      .toEqual({ listed: 0, indexed: 30 });
    db.close();
    expect(await found(catalog, 'number17')).toEqual(['msg_17']);

    // Made just before a search, and deleted before being indexed: found, and not found.
    await capture(catalog, 'msg_new', 'parcel fresh');
    await capture(catalog, 'msg_gone', 'parcel fresh');
    await catalog.deleteCapture('ten_a', 'msg_gone');
    expect(await found(catalog, 'fresh')).toEqual(['msg_new']);

    // Captured again after its delete: found once. Listed at close: indexed after a restart.
    await capture(catalog, 'msg_gone', 'parcel again');
    await capture(catalog, 'msg_last', 'parcel again');
    await catalog.close();
    catalog = new SqliteCatalog(file);
    expect(await found(catalog, 'again')).toEqual(['msg_last', 'msg_gone']);
    expect((await found(catalog, 'parcel')).length).toBe(33);
  } finally {
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});

// The writer thread indexes (and commits captures) while this thread's connection writes the same
// file: neither may refuse the other's commit that came between its read and its write.
it('takes captures and a contacts import together while the writer indexes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const file = join(dir, 'catalog.db');
  const catalog = new SqliteCatalog(file);
  const db = new Database(file, { readonly: true });
  const listed = () => (db.prepare('SELECT count(*) AS n FROM captures_unindexed').get() as { n: number }).n;
  const capture = (message_id: string) =>
    captureOf(catalog, message_id, { subject: 'Receipt', html: `<p>${'Thank you for your order. '.repeat(40)}${message_id}</p>`, text: null });
  try {
    const tenant = await catalog.createTenant({ id: 'ten_a', name: 'Acme', default_from: null, quota: { per_second: null, per_day: null } });
    const audience = await catalog.createAudience({ id: 'aud_a', tenant_id: tenant.id, name: 'News' });
    await Promise.all(Array.from({ length: 3000 }, (_, i) => capture(`msg_${i}`)));
    let round = 0;
    const refused: unknown[] = [];
    const importRound = async () => {
      const rows = Array.from({ length: 5 }, (_, i) => ({ id: `con_${round}_${i}`, email: `c${round}.${i}@example.com`, data: {} }));
      round++;
      await catalog.upsertContacts(tenant.id, audience.id, rows).catch((error: unknown) => refused.push(error));
    };
    // The writer indexes the captures once idle, part after part, while this thread imports.
    await expect.poll(async () => (await importRound(), listed()), { timeout: 30_000, interval: 1 }).toBe(0);
    // Captures and imports at once, then a search, which indexes first on the writer.
    for (let i = 0; i < 20; i++) await Promise.all([capture(`msg_more_${i}`), importRound()]);
    expect(refused).toEqual([]);
    const all = await catalog.listCaptures('ten_a', { limit: 1, search: 'order', key_id: 'key_a' });
    expect(all.data).toHaveLength(1);
    expect((db.prepare('SELECT count(*) AS n FROM captures_search').get() as { n: number }).n).toBe(3020);
    expect((db.prepare('SELECT count(*) AS n FROM contacts').get() as { n: number }).n).toBe(5 * round);
  } finally {
    db.close();
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});
