// The catalog contract against PostgreSQL, and the migrations. Needs a server: DATABASE_URL (a
// postgres:// URL whose user may create databases), else the local one. Every run works in
// databases of its own, gatepost_test_<random>, dropped at the end, so runs can go in parallel.
// No server is a failure, not a skip: CI starts one, and a green run must mean these ran.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { catalogContract } from '../catalog.contract.ts';
import { sealedSecretsContract } from '../catalog.sealed.contract.ts';
import { eventually } from '../../test/harness/gatepost.harness.ts';
import { PgCatalog, migrate } from './catalog.pg.ts';

const SERVER_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

function notAnswering(error: unknown): Error {
  const shown = new URL(SERVER_URL);
  if (shown.password) shown.password = '***';
  const why = (error as Error).message || (error as { code?: string }).code || String(error);
  return new Error(
    `PostgreSQL is not answering at ${shown.href} (${why}). These tests need it: set DATABASE_URL to a server ` +
      'whose user may create databases, or start the local one ' +
      '(Debian/Ubuntu: pg_ctlcluster --skip-systemctl-redirect <version> main start).',
  );
}

/** Runs `work` on a connection to the server's maintenance database. */
async function onServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw notAnswering(error);
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A new, empty database. Where the server can, it is an en-US (ICU) one: a database in a
 * natural-language locale sorts "a_b" before "a-z" and "alice" before "Bob", so the byte order
 * the contract asks for is checked against a locale that would break it.
 */
async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gatepost_test_${randomBytes(6).toString('hex')}`;
  await onServer(async (client) => {
    try {
      await client.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
    } catch {
      await client.query(`CREATE DATABASE ${name}`); // PostgreSQL before 15, or built without ICU
    }
  });
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: () => onServer(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

it('PostgreSQL is answering, version 13 or later (DROP DATABASE ... WITH (FORCE))', async () => {
  const version = await onServer(
    async (client) => (await client.query<{ v: string }>('SELECT current_setting($1) AS v', ['server_version_num'])).rows[0]?.v,
  );
  expect(Number(version)).toBeGreaterThanOrEqual(130_000);
});

catalogContract('PostgreSQL', async () => {
  const db = await freshDatabase();
  try {
    const catalog = await PgCatalog.open(db.url);
    return {
      catalog,
      cleanup: async () => {
        await catalog.close();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
});

sealedSecretsContract('PostgreSQL', async () => {
  const db = await freshDatabase();
  return {
    open: (sealer) => PgCatalog.open(db.url, { sealer }),
    rawDomainKeys: async () => {
      const rows = await sql<{ rsa_private: string; ed_private: string }>(db.url, 'SELECT rsa_private, ed_private FROM domains');
      return rows.flatMap((r) => [r.rsa_private, r.ed_private]);
    },
    rawSecrets: async () => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ secret: string; previous_secret: string | null }>(
          'SELECT secret, previous_secret FROM webhooks',
        );
        return rows.flatMap((r) => [r.secret, r.previous_secret]).filter((v) => v !== null);
      } finally {
        await client.end();
      }
    },
    rawReceiptKeys: async () =>
      (await sql<{ private_key: string }>(db.url, 'SELECT private_key FROM receipt_keys')).map((r) => r.private_key),
    cleanup: () => db.drop(),
  };
});

describe('PgCatalog migrations', () => {
  it('replicas starting together migrate once, in order, and all of them open', async () => {
    const db = await freshDatabase();
    try {
      const catalogs = await Promise.all(Array.from({ length: 4 }, () => PgCatalog.open(db.url)));
      expect(await sql(db.url, 'SELECT version, name FROM schema_migrations ORDER BY version')).toEqual([
        { version: 1, name: '001_catalog.sql' },
        { version: 2, name: '002_domains.sql' },
        { version: 3, name: '003_receipt_keys.sql' },
        { version: 4, name: '004_inbox.sql' },
        { version: 5, name: '005_inbound.sql' },
        { version: 6, name: '006_reports.sql' },
        { version: 7, name: '007_tracking_host.sql' },
        { version: 8, name: '008_queue_weight.sql' },
        { version: 9, name: '009_audiences.sql' },
        { version: 10, name: '010_broadcasts.sql' },
        { version: 11, name: '011_automations.sql' },
        { version: 12, name: '012_queue_snapshots.sql' },
        { version: 13, name: '013_engagement.sql' },
        { version: 14, name: '014_breaker_states.sql' },
        { version: 15, name: '015_broadcast_state_contact_triggers.sql' },
        { version: 16, name: '016_change_notifications.sql' },
      ]);
      // Each of them works against the one schema.
      const tenant = await catalogs[0]!.createTenant({
        id: 'ten_1',
        name: 'A',
        default_from: null,
        quota: { per_second: null, per_day: 3 },
      });
      for (const c of catalogs) expect(await c.getTenant('ten_1')).toEqual(tenant);
      await Promise.all(catalogs.map((c) => c.close()));
    } finally {
      await db.drop();
    }
  });

  it('a restart applies nothing again and keeps the data', async () => {
    const db = await freshDatabase();
    try {
      const first = await PgCatalog.open(db.url);
      const tenant = await first.createTenant({
        id: 'ten_1',
        name: 'A',
        default_from: 'a@x.test',
        quota: { per_second: 1, per_day: null },
      });
      await first.close();

      const pool = new pg.Pool({ connectionString: db.url });
      expect(await migrate(pool)).toEqual([]);
      await pool.end();
      const second = await PgCatalog.open(db.url);
      expect(await second.getTenant('ten_1')).toEqual(tenant);
      await second.close();
    } finally {
      await db.drop();
    }
  });

  it('applies only the new ones, and a failing migration leaves nothing of its run behind', async () => {
    const db = await freshDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'gatepost-migrations-'));
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      await writeFile(join(dir, '001_one.sql'), 'CREATE TABLE one (id int);');
      await writeFile(join(dir, 'notes.txt'), 'not a migration');
      expect(await migrate(pool, dir)).toEqual([1]);

      await writeFile(join(dir, '002_two.sql'), 'CREATE TABLE two (id int);');
      await writeFile(join(dir, '003_broken.sql'), 'CREATE TABLE three (id int); SELECT no_such_column FROM two;');
      await expect(migrate(pool, dir)).rejects.toThrow(/no_such_column/);
      expect(await sql(db.url, 'SELECT version FROM schema_migrations ORDER BY version')).toEqual([{ version: 1 }]);
      expect(await sql(db.url, "SELECT to_regclass('two') AS two, to_regclass('three') AS three")).toEqual([
        { two: null, three: null },
      ]);

      await writeFile(join(dir, '003_broken.sql'), 'CREATE TABLE three (id int);');
      expect(await migrate(pool, dir)).toEqual([2, 3]);
      expect(await sql(db.url, 'SELECT version, name FROM schema_migrations ORDER BY version')).toEqual([
        { version: 1, name: '001_one.sql' },
        { version: 2, name: '002_two.sql' },
        { version: 3, name: '003_broken.sql' },
      ]);
    } finally {
      await pool.end();
      await rm(dir, { recursive: true, force: true });
      await db.drop();
    }
  });
});

describe("PgCatalog's look-ups kept in memory", () => {
  /** The connections of this database listening for the catalog's changes. */
  const LISTENING =
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'gatepost catalog changes'";
  /** The enabled endpoints of `tenantId` for email.sent and its automations on custom event "x", by id, as `catalog` answers them. */
  const seen = async (catalog: PgCatalog, tenantId: string) => ({
    webhooks: (await catalog.webhooksFor(tenantId, 'email.sent')).map((w) => w.id),
    automations: (await catalog.automationsTriggeredBy(tenantId, 'custom_event', 'x')).map((a) => a.id),
  });
  const webhook = (tenant_id: string, id: string) => ({
    id,
    tenant_id,
    url: 'https://hooks.example.com/in',
    events: ['email.sent'],
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  });
  const automation = (tenant_id: string, id: string, audience_id: string) => ({
    id,
    tenant_id,
    name: 'On x',
    audience_id,
    trigger: { type: 'custom_event' as const, name: 'x' },
    steps: [{ id: 'hello', type: 'send' as const, template: 'welcome', from: 'Shop <hi@shop.example>' }],
    sandbox: true,
    key_id: 'key_1',
  });

  /** Two catalogs on a new database, as two processes have them, and a tenant made by the writer. */
  async function twoProcesses(
    work: (c: { db: { url: string }; reader: PgCatalog; writer: PgCatalog; t: { id: string } }) => Promise<void>,
  ): Promise<void> {
    const db = await freshDatabase();
    const [reader, writer] = [await PgCatalog.open(db.url), await PgCatalog.open(db.url)];
    try {
      const t = await writer.createTenant({
        id: 'ten_1',
        name: 'A',
        default_from: null,
        quota: { per_second: null, per_day: null },
      });
      await work({ db, reader, writer, t });
    } finally {
      await Promise.all([reader.close(), writer.close()]);
      await db.drop();
    }
  }

  it('follow changes made by another process, or by hand in the database, once they commit', () =>
    twoProcesses(async ({ db, reader, writer, t }) => {
      const aud = await writer.createAudience({ id: 'aud_1', tenant_id: t.id, name: 'All' });
      // Asked once with none there: what the reader keeps must not outlive the changes below.
      expect(await seen(reader, t.id)).toEqual({ webhooks: [], automations: [] });

      await writer.createWebhook(webhook(t.id, 'whk_1'));
      await writer.createAutomation(automation(t.id, 'aut_1', aud.id));
      await eventually(
        async () => JSON.stringify(await seen(reader, t.id)) === '{"webhooks":["whk_1"],"automations":["aut_1"]}',
        5_000,
      );

      await writer.updateWebhook(t.id, 'whk_1', { enabled: false });
      await writer.updateAutomation(t.id, 'aut_1', { enabled: false });
      await eventually(async () => JSON.stringify(await seen(reader, t.id)) === '{"webhooks":[],"automations":[]}', 5_000);

      // A suppression another process writes: an address it has not heard of is answered at once.
      expect(await reader.getSuppression(t.id, 'ann@example.com')).toBeNull();
      const suppression = {
        tenant_id: t.id,
        address: 'ann@example.com',
        reason: 'manual' as const,
        detail: null,
        created_at: new Date().toISOString(),
      };
      await writer.putSuppression(suppression);
      await eventually(async () => (await reader.getSuppression(t.id, 'ann@example.com'))?.reason === 'manual', 5_000);

      await sql(db.url, "UPDATE webhooks SET enabled = true WHERE id = 'whk_1'");
      await eventually(async () => (await seen(reader, t.id)).webhooks[0] === 'whk_1', 5_000);
      await writer.deleteWebhook(t.id, 'whk_1');
      await eventually(async () => (await seen(reader, t.id)).webhooks.length === 0, 5_000);
    }));

  it('listen again when their connection is lost, forgetting what they kept while nobody listened', () =>
    twoProcesses(async ({ db, reader, writer, t }) => {
      expect((await seen(reader, t.id)).webhooks).toEqual([]);
      // Every connection listening, the reader's among them, cut off by the server.
      const cut = await sql<{ ended: boolean }>(db.url, `SELECT pg_terminate_backend(pid) AS ended FROM (${LISTENING}) l`);
      expect(cut.length).toBeGreaterThanOrEqual(2);
      // Made while the reader may not be listening yet: it must see them all the same.
      await writer.createWebhook(webhook(t.id, 'whk_1'));
      await sql(
        db.url,
        `INSERT INTO suppressions (tenant_id, address, reason, detail, created_at) VALUES ('${t.id}', 'bob@example.com', 'manual', NULL, now())`,
      );
      // Listening again, it has read what it missed: the suppression is on its list.
      await eventually(async () => (await sql(db.url, LISTENING)).length >= 2, 5_000);
      await eventually(async () => (await seen(reader, t.id)).webhooks[0] === 'whk_1', 5_000);
      expect(await reader.getSuppression(t.id, 'bob@example.com')).toMatchObject({ reason: 'manual' });
      // And a later change is heard.
      await writer.deleteWebhook(t.id, 'whk_1');
      await eventually(async () => (await seen(reader, t.id)).webhooks.length === 0, 5_000);
    }));
});
