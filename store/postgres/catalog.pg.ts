// The catalog on PostgreSQL (cluster runtime): the same behaviour as the SQLite store, checked by
// the same contract (../catalog.contract.ts). Times are timestamptz(3) and come back as the ISO
// 8601 strings they went in as; quota and capture bodies are jsonb; text keys sort byte by byte.
import pg from 'pg';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type {
  Broadcast,
  BroadcastCreate,
  BroadcastEventKind,
  BroadcastState,
  Audience,
  Automation,
  AutomationCreate,
  AutomationPatch,
  AutomationRun,
  AutomationTrigger,
  ContactsUpserted,
  Contact,
  ContactCreate,
  ContactPatch,
  ContactUpsert,
  ContactTrigger,
  InboundAttachment,
  InboundMessage,
  InboundMessageCreate,
  InboundRoute,
  InboundRouteCreate,
  InboundRoutePatch,
  ApiKey,
  CapturedMessage,
  CaptureQuery,
  Catalog,
  DomainCheck,
  EngagementEvent,
  DomainCreate,
  KeySettings,
  NewKey,
  NewReceiptKey,
  InboxSession,
  Page,
  BreakerStatus,
  QueueRow,
  Quota,
  SendingDomain,
  ReceiptKey,
  ReceiptPublicKey,
  Suppression,
  Template,
  TemplateFields,
  Tenant,
  WebhookCreate,
  WebhookDisabledReason,
  WebhookEndpoint,
  WebhookPatch,
  ReceivedReport,
} from '../catalog.port.ts';
import {
  draftBroadcast,
  BROADCAST_COLUMNS,
  BROADCAST_INSERT_COLUMNS,
  broadcastOf,
  broadcastPage,
  broadcastValues,
  countsOf,
  type BroadcastRow,
} from '../broadcasts.rows.ts';
import {
  AUDIENCE_COLUMNS,
  CONTACT_COLUMNS,
  contactExists,
  patchedContact,
  contactOf,
  isContactId,
  type ContactRow,
} from '../audiences.rows.ts';
import { normalizeAddress } from '../../mail/address.ts';
import {
  AUTOMATION_COLUMNS,
  RUN_COLUMNS,
  automationOf,
  automationValues,
  patchedAutomation,
  runValues,
  triggeredBy,
  type AutomationRow,
} from '../automations.rows.ts';
import { keyRecord } from '../catalog.port.ts';
import type { StoredEvent } from '../../events/email.event.ts';
import { storedEngagement, type EngagementRow } from '../engagement.rows.ts';
import { htmlWords } from '../../mail/content.ts';
import { badCursor, decodeCursor, pageOf } from '../cursor.ts';
import { plainSealer, type Sealer } from '../../lib/sealed.ts';
import {
  applyWebhookPatch,
  disabledEndpoint,
  newEndpoint,
  openedEndpoint,
  rotatedEndpoint,
  sealedEndpoint,
} from '../webhooks.patch.ts';
import {
  DOMAIN_COLUMNS,
  checkedDomain,
  domainExists,
  domainOf,
  domainRow,
  domainTaken,
  newDomain,
  type DomainRow,
} from '../domains.rows.ts';
import { INBOUND_MESSAGE_COLUMNS, ROUTE_COLUMNS, newRoute, patchedRoute, routeExists } from '../inbound.rows.ts';
import { CatalogChanges, type CachedTable } from './changes.pg.ts';
import { openedReceiptKey, publicReceiptKey, storedReceiptKey, type ReceiptKeyRow } from '../receipt.keys.stored.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

/** The advisory lock replicas take to migrate one at a time ("gatepost" in ASCII). */
const MIGRATION_LOCK = '7449363237674382196';

const TIMESTAMPTZ = pg.types.builtins.TIMESTAMPTZ;
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (value: string) => Date;

/** timestamptz read as `toISOString()` strings, like every time in the Catalog API; the rest as pg reads it. */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ && format !== 'binary'
      ? (value: string) => parseTimestamptz(value).toISOString()
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

const now = () => new Date().toISOString();

/** Whether an enabled automation of audience $3 of tenant $2 starts on `contact_added` (createContact's and upsertContacts' parameters). */
const STARTS_ON_CONTACT_ADDED = `EXISTS (SELECT 1 FROM automations
  WHERE tenant_id = $2 AND trigger_type = 'contact_added' AND trigger_key = $3 AND enabled)`;

interface TenantRow {
  id: string;
  name: string;
  default_from: string | null;
  quota: Quota;
  queue_weight: number;
  created_at: string;
}

/** jsonb keeps no key order: put the quota's fields back in the order the API writes them. */
const toTenant = ({ quota, ...row }: TenantRow): Tenant => ({
  ...row,
  quota: Object.assign({ per_second: quota.per_second, per_day: quota.per_day }, quota),
});

const KEY_COLUMNS =
  'id, tenant_id, kind, scope, sandbox, name, prefix, created_at, revoked_at, allowed_origins, ' +
  "json_build_object('per_key', rate_per_key, 'per_ip', rate_per_ip) AS rate_limit";

// Stored as from_addr and to_addr (FROM and TO are SQL keywords), read back under their API names.
const TEMPLATE_COLUMNS =
  'id, tenant_id, slug, name, subject, html, text, from_addr AS "from", to_addr AS "to", reply_to, created_at, updated_at';

const TEMPLATE_FIELD_COLUMNS: Record<keyof TemplateFields, string> = {
  slug: 'slug',
  name: 'name',
  subject: 'subject',
  html: 'html',
  text: 'text',
  from: 'from_addr',
  to: 'to_addr',
  reply_to: 'reply_to',
};

const SUPPRESSION_COLUMNS = 'tenant_id, address, reason, detail, created_at';

/** A violation of the slug constraint is a taken slug; anything else stays what it is. */
function slugTaken(error: unknown, slug: string): unknown {
  const e = error as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'templates_slug_unique'
    ? new GatepostError('template_exists', `A template with slug "${slug}" already exists.`)
    : error;
}

const WEBHOOK_COLUMNS =
  'id, tenant_id, url, events, enabled, disabled_reason, disabled_at, secret, previous_secret, previous_secret_expires_at, created_at, updated_at';

/**
 * A capture as stored: headers as [name, value] pairs, because jsonb would reorder an object's
 * keys; one from before key ids (or signed captures) were recorded has none.
 */
type StoredCapture = Omit<CapturedMessage, 'headers' | 'key_id' | 'dkim' | 'source'> &
  Partial<Pick<CapturedMessage, 'key_id' | 'dkim' | 'source'>> & { headers: [string, string][] };

/** What a search of the inbox looks in: the recipient, the subject and the text part (the html's words when none was given). */
const captureSearchText = (c: CapturedMessage): string => [c.to, c.subject, c.text ?? htmlWords(c.html)].join('\n');

const toStored = (c: CapturedMessage): StoredCapture => ({ ...c, headers: Object.entries(c.headers) });

/** The capture with its fields in the order the API writes them (jsonb returns them in its own). */
function fromStored(stored: StoredCapture): CapturedMessage {
  const {
    message_id,
    tenant_id,
    from,
    to,
    subject,
    html,
    text,
    headers,
    captured_at,
    key_id = null,
    dkim = null,
    source = null,
    ...rest
  } = stored;
  return {
    message_id,
    tenant_id,
    from,
    to,
    subject,
    html,
    text,
    headers: Object.fromEntries(headers),
    captured_at,
    key_id,
    dkim,
    source,
    ...rest,
  };
}

/**
 * Runs `work` in one transaction on a connection of its own: committed if it resolves, rolled
 * back if it throws.
 */
async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (error) {
    const rolledBack = await client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    client.release(!rolledBack); // a connection that could not roll back is closed, not pooled
    throw error;
  }
}

/**
 * Applies the numbered migrations (NNN_name.sql, in order, each once), recording each in
 * schema_migrations. One transaction under an advisory lock: replicas starting together wait for
 * each other, and the second finds nothing left to do. (A migration that cannot run inside a
 * transaction, such as CREATE INDEX CONCURRENTLY, does not belong here.)
 */
export async function migrate(pool: pg.Pool, dir = MIGRATIONS_DIR): Promise<number[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version    integer PRIMARY KEY,
         name       text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
    );
    const applied: number[] = [];
    for (const file of files) {
      const version = Number(file.slice(0, 3));
      if (done.has(version)) continue;
      await client.query(await readFile(join(dir, file), 'utf8'));
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, file]);
      applied.push(version);
    }
    return applied;
  });
}

/** An endpoint's columns in WEBHOOK_COLUMNS order. */
const webhookValues = (w: WebhookEndpoint): unknown[] => [
  w.id,
  w.tenant_id,
  w.url,
  w.events,
  w.enabled,
  w.disabled_reason,
  w.disabled_at,
  w.secret,
  w.previous_secret,
  w.previous_secret_expires_at,
  w.created_at,
  w.updated_at,
];

export class PgCatalog implements Catalog {
  /**
   * Uses `pool` as it is: migrate it first (or use open). `sealer` seals webhook secrets at rest
   * (lib/sealed.ts). With `changes` (listening), each tenant's enabled webhook endpoints and
   * automations are read once and kept until a change to them is heard; without, every look-up
   * asks the database.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly sealer: Sealer = plainSealer,
    private readonly changes: CatalogChanges | null = null,
  ) {}

  /**
   * A catalog on the database at `url`, migrated. `onError` hears of idle connections that fail
   * (the server restarted, say): the pool drops them and connects again when next needed.
   */
  static async open(
    url: string,
    options: { pool?: Omit<pg.PoolConfig, 'connectionString'>; onError?: (error: Error) => void; sealer?: Sealer } = {},
  ): Promise<PgCatalog> {
    const pool = new pg.Pool({ ...options.pool, connectionString: url });
    // Without a listener, an idle connection's error would be an uncaught 'error' event.
    pool.on('error', options.onError ?? (() => {}));
    try {
      await migrate(pool);
    } catch (error) {
      await pool.end();
      throw error;
    }
    const changes = new CatalogChanges({ ...options.pool, connectionString: url }, options.onError);
    await changes.start();
    return new PgCatalog(pool, options.sealer, changes);
  }

  /** `tenantId`'s rows of `table` as `read` answers them: kept while no change is heard, with `changes`. */
  private tenantRows<T extends object>(table: CachedTable, tenantId: string, read: () => Promise<T>): Promise<T> {
    return this.changes ? this.changes.rows(table, tenantId, read) : read();
  }

  /** After this process changed `table`'s rows of `tenantId`: others hear of it from the table's trigger. */
  private changed(table: CachedTable, tenantId: string): void {
    this.changes?.forget(table, tenantId);
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>({ text, values, types: TYPES })).rows;
  }

  async createTenant(t: { id: string; name: string; default_from: string | null; quota: Quota }): Promise<Tenant> {
    const tenant: Tenant = { ...t, queue_weight: 1, created_at: now() };
    await this.query(
      'INSERT INTO tenants (id, name, default_from, quota, queue_weight, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [tenant.id, tenant.name, tenant.default_from, JSON.stringify(tenant.quota), tenant.queue_weight, tenant.created_at],
    );
    return tenant;
  }

  async getTenant(id: string): Promise<Tenant | null> {
    const [row] = await this.query<TenantRow>('SELECT * FROM tenants WHERE id = $1', [id]);
    return row ? toTenant(row) : null;
  }

  async listTenants(): Promise<Tenant[]> {
    return (await this.query<TenantRow>('SELECT * FROM tenants ORDER BY created_at, id')).map(toTenant);
  }

  async updateTenant(
    id: string,
    patch: Partial<Pick<Tenant, 'name' | 'default_from' | 'quota' | 'queue_weight'>>,
  ): Promise<Tenant | null> {
    const values: unknown[] = [id];
    const sets: string[] = [];
    const set = (column: string, value: unknown) => sets.push(`${column} = $${values.push(value)}`);
    if (patch.name !== undefined) set('name', patch.name);
    if (patch.default_from !== undefined) set('default_from', patch.default_from);
    if (patch.quota !== undefined) set('quota', JSON.stringify(patch.quota));
    if (patch.queue_weight !== undefined) set('queue_weight', patch.queue_weight);
    if (sets.length === 0) return this.getTenant(id);
    const [row] = await this.query<TenantRow>(`UPDATE tenants SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, values);
    return row ? toTenant(row) : null;
  }

  async createKey(k: NewKey, hash: string): Promise<ApiKey> {
    const key = keyRecord(k, now());
    await this.query(
      `INSERT INTO api_keys (id, tenant_id, kind, scope, sandbox, name, prefix, hash, created_at, allowed_origins, rate_per_key, rate_per_ip)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        key.id,
        key.tenant_id,
        key.kind,
        key.scope,
        key.sandbox,
        key.name,
        key.prefix,
        hash,
        key.created_at,
        key.allowed_origins,
        key.rate_limit.per_key,
        key.rate_limit.per_ip,
      ],
    );
    return key;
  }

  async findKeyByHash(hash: string): Promise<ApiKey | null> {
    const [row] = await this.query<ApiKey>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, [hash]);
    return row ?? null;
  }

  async listKeys(tenantId: string): Promise<ApiKey[]> {
    return this.query<ApiKey>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
  }

  /** A key revoked before keeps the time it was first revoked. */
  async revokeKey(tenantId: string, keyId: string): Promise<ApiKey | null> {
    const [row] = await this.query<ApiKey>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE tenant_id = $1 AND id = $2 RETURNING ${KEY_COLUMNS}`,
      [tenantId, keyId, now()],
    );
    return row ?? null;
  }

  /** One statement: the fields given, and nothing else. */
  async updateKey(tenantId: string, keyId: string, patch: Partial<KeySettings>): Promise<ApiKey | null> {
    const values: unknown[] = [tenantId, keyId];
    const sets: string[] = [];
    const set = (column: string, value: unknown) => sets.push(`${column} = $${values.push(value)}`);
    if (patch.name !== undefined) set('name', patch.name);
    if (patch.allowed_origins !== undefined) set('allowed_origins', patch.allowed_origins);
    if (patch.rate_limit !== undefined) {
      set('rate_per_key', patch.rate_limit.per_key);
      set('rate_per_ip', patch.rate_limit.per_ip);
    }
    // With nothing to change, a no-op assignment still answers the key (or no row).
    if (sets.length === 0) sets.push('name = name');
    const [row] = await this.query<ApiKey>(
      `UPDATE api_keys SET ${sets.join(', ')} WHERE tenant_id = $1 AND id = $2 RETURNING ${KEY_COLUMNS}`,
      values,
    );
    return row ?? null;
  }

  async createTemplate(tenantId: string, id: string, f: TemplateFields): Promise<Template> {
    const at = now();
    const template: Template = { ...f, id, tenant_id: tenantId, created_at: at, updated_at: at };
    try {
      await this.query(
        `INSERT INTO templates (id, tenant_id, slug, name, subject, html, text, from_addr, to_addr, reply_to, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [id, tenantId, f.slug, f.name, f.subject, f.html, f.text, f.from, f.to, f.reply_to, at, at],
      );
    } catch (error) {
      throw slugTaken(error, f.slug);
    }
    return template;
  }

  async getTemplate(tenantId: string, slug: string): Promise<Template | null> {
    const [row] = await this.query<Template>(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE tenant_id = $1 AND slug = $2`, [
      tenantId,
      slug,
    ]);
    return row ?? null;
  }

  async listTemplates(tenantId: string): Promise<Template[]> {
    return this.query<Template>(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE tenant_id = $1 ORDER BY slug`, [tenantId]);
  }

  /** One statement: the fields given, and updated_at. */
  async updateTemplate(tenantId: string, slug: string, patch: Partial<TemplateFields>): Promise<Template | null> {
    const values: unknown[] = [tenantId, slug];
    const sets: string[] = [];
    for (const [field, column] of Object.entries(TEMPLATE_FIELD_COLUMNS)) {
      const value = patch[field as keyof TemplateFields];
      if (value !== undefined) sets.push(`${column} = $${values.push(value)}`);
    }
    sets.push(`updated_at = $${values.push(now())}`);
    try {
      const [row] = await this.query<Template>(
        `UPDATE templates SET ${sets.join(', ')} WHERE tenant_id = $1 AND slug = $2 RETURNING ${TEMPLATE_COLUMNS}`,
        values,
      );
      return row ?? null;
    } catch (error) {
      throw slugTaken(error, patch.slug ?? slug);
    }
  }

  async deleteTemplate(tenantId: string, slug: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM templates WHERE tenant_id = $1 AND slug = $2', [tenantId, slug]);
    return (result.rowCount ?? 0) > 0;
  }

  async putSuppression(s: Suppression): Promise<void> {
    this.changes?.listed(s.tenant_id, s.address);
    await this.query(
      `INSERT INTO suppressions (${SUPPRESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant_id, address) DO UPDATE
         SET reason = excluded.reason, detail = excluded.detail, created_at = excluded.created_at`,
      [s.tenant_id, s.address, s.reason, s.detail, s.created_at],
    );
  }

  async deleteSuppression(tenantId: string, address: string): Promise<void> {
    await this.query('DELETE FROM suppressions WHERE tenant_id = $1 AND address = $2', [tenantId, address]);
  }

  async getSuppression(tenantId: string, address: string): Promise<Suppression | null> {
    // Most addresses never were: the process's list of those that may be answers without a query.
    if (this.changes && !this.changes.maySuppress(tenantId, address)) return null;
    const rows = await this.query<Suppression>(
      `SELECT ${SUPPRESSION_COLUMNS} FROM suppressions WHERE tenant_id = $1 AND address = $2`,
      [tenantId, address],
    );
    return rows[0] ?? null;
  }

  async listSuppressions(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<Suppression>> {
    const after = decodeCursor(opts.cursor, 1)?.[0] ?? '';
    const rows = await this.query<Suppression>(
      `SELECT ${SUPPRESSION_COLUMNS} FROM suppressions WHERE tenant_id = $1 AND address > $2 ORDER BY address LIMIT $3`,
      [tenantId, after, opts.limit + 1],
    );
    return pageOf(rows, opts.limit, (last) => [last.address]);
  }

  /** The first capture of a message stays; a repeat (a redelivered event) changes nothing. */
  async putCapture(c: CapturedMessage): Promise<void> {
    await this.query(
      `INSERT INTO captures (tenant_id, message_id, captured_at, key_id, body, search) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING`,
      [c.tenant_id, c.message_id, c.captured_at, c.key_id, JSON.stringify(toStored(c)), captureSearchText(c)],
    );
  }

  /** One statement for the whole group, its rows as one JSON array. */
  async recordEngagement(events: EngagementEvent[]): Promise<void> {
    if (events.length === 0) return;
    const rows = events.map(({ tenant_id, message_id, event }) => ({
      event_id: event.id,
      message_id,
      tenant_id,
      type: event.type,
      created_at: event.created_at,
      data: JSON.stringify(event.data),
    }));
    await this.query(
      // In the array's order, so `seq` is the order the hits came in.
      `INSERT INTO engagement (event_id, message_id, tenant_id, type, created_at, data)
         SELECT r->>'event_id', r->>'message_id', r->>'tenant_id', r->>'type', r->>'created_at', r->>'data'
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(r, n)
         ORDER BY n
       ON CONFLICT (event_id) DO NOTHING`,
      [JSON.stringify(rows)],
    );
  }

  async engagementOf(messageId: string): Promise<StoredEvent[]> {
    const rows = await this.query<EngagementRow>(
      'SELECT event_id, type, created_at, data FROM engagement WHERE message_id = $1 ORDER BY created_at, seq',
      [messageId],
    );
    return rows.map(storedEngagement);
  }

  async forgetEngagement(messageId: string): Promise<void> {
    await this.query('DELETE FROM engagement WHERE message_id = $1', [messageId]);
  }

  async listCaptures(tenantId: string, opts: CaptureQuery): Promise<Page<CapturedMessage>> {
    const cursor = decodeCursor(opts.cursor, 2);
    // PostgreSQL's text refuses a NUL outright: no cursor handed out holds one.
    if (cursor?.some((part) => part.includes('\u0000'))) throw badCursor();
    // Newest first along captures_recent, or captures_by_key for one key's; a search is an ILIKE
    // the trigram index answers.
    const where = ['tenant_id = $1'];
    const values: unknown[] = [tenantId];
    const param = (value: unknown) => `$${values.push(value)}`;
    if (opts.search !== undefined) where.push(`search ILIKE ${param(`%${opts.search.replace(/[\\%_]/g, '\\$&')}%`)}`);
    if (opts.key_id !== undefined) where.push(`key_id = ${param(opts.key_id)}`);
    if (cursor) where.push(`(captured_at, message_id) < (${param(cursor[0])}::timestamptz, ${param(cursor[1])})`);
    let rows: { body: StoredCapture }[];
    try {
      rows = await this.query(
        `SELECT body FROM captures WHERE ${where.join(' AND ')} ORDER BY captured_at DESC, message_id DESC LIMIT ${param(opts.limit + 1)}`,
        values,
      );
    } catch (error) {
      // A cursor whose time is no time (22007, 22008) is not one this API handed out.
      const code = (error as { code?: string }).code;
      throw cursor && (code === '22007' || code === '22008') ? badCursor() : error;
    }
    return pageOf(
      rows,
      opts.limit,
      (last) => [last.captured_at, last.message_id],
      (r) => fromStored(r.body),
    );
  }

  async getCapture(tenantId: string, messageId: string): Promise<CapturedMessage | null> {
    const [row] = await this.query<{ body: StoredCapture }>(
      'SELECT body FROM captures WHERE tenant_id = $1 AND message_id = $2',
      [tenantId, messageId],
    );
    return row ? fromStored(row.body) : null;
  }

  async deleteCapture(tenantId: string, messageId: string): Promise<boolean> {
    const rows = await this.query('DELETE FROM captures WHERE tenant_id = $1 AND message_id = $2 RETURNING message_id', [
      tenantId,
      messageId,
    ]);
    return rows.length > 0;
  }

  async deleteCaptures(tenantId: string, keyId?: string): Promise<number> {
    const rows =
      keyId === undefined
        ? await this.query('DELETE FROM captures WHERE tenant_id = $1 RETURNING message_id', [tenantId])
        : await this.query('DELETE FROM captures WHERE tenant_id = $1 AND key_id = $2 RETURNING message_id', [tenantId, keyId]);
    return rows.length;
  }

  async createInboxSession(s: InboxSession): Promise<void> {
    await this.query('DELETE FROM inbox_sessions WHERE expires_at <= now()');
    await this.query('INSERT INTO inbox_sessions (hash, key_id, expires_at) VALUES ($1, $2, $3)', [
      s.hash,
      s.key_id,
      s.expires_at,
    ]);
  }

  async inboxSessionKey(hash: string): Promise<ApiKey | null> {
    const [row] = await this.query<ApiKey>(
      `SELECT ${KEY_COLUMNS} FROM api_keys
         WHERE revoked_at IS NULL AND id = (SELECT key_id FROM inbox_sessions WHERE hash = $1 AND expires_at > now())`,
      [hash],
    );
    return row ?? null;
  }

  async deleteInboxSession(hash: string): Promise<void> {
    await this.query('DELETE FROM inbox_sessions WHERE hash = $1', [hash]);
  }

  async createWebhook(w: WebhookCreate): Promise<WebhookEndpoint> {
    const endpoint = newEndpoint(w, now());
    await this.query(
      `INSERT INTO webhooks (${WEBHOOK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      webhookValues(sealedEndpoint(endpoint, this.sealer)),
    );
    this.changed('webhooks', endpoint.tenant_id);
    return endpoint;
  }

  async getWebhook(tenantId: string, id: string): Promise<WebhookEndpoint | null> {
    const [row] = await this.query<WebhookEndpoint>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ]);
    return row ? openedEndpoint(row, this.sealer) : null;
  }

  async listWebhooks(tenantId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.query<WebhookEndpoint>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id`,
      [tenantId],
    );
    return rows.map((w) => openedEndpoint(w, this.sealer));
  }

  async webhooksFor(tenantId: string, eventType: string): Promise<WebhookEndpoint[]> {
    const enabled = await this.tenantRows('webhooks', tenantId, async () =>
      (
        await this.query<WebhookEndpoint>(
          `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = $1 AND enabled ORDER BY created_at, id`,
          [tenantId],
        )
      ).map((w) => openedEndpoint(w, this.sealer)),
    );
    return enabled.filter((w) => w.events.includes(eventType));
  }

  /** Read (FOR UPDATE), change and write in one transaction: a concurrent change waits, and is not lost. */
  private async changeWebhook(
    tenantId: string,
    id: string,
    change: (w: WebhookEndpoint) => WebhookEndpoint,
  ): Promise<WebhookEndpoint | null> {
    const next = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<WebhookEndpoint>({
        text: `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
        values: [tenantId, id],
        types: TYPES,
      });
      const current = rows[0] && openedEndpoint(rows[0], this.sealer);
      const next = current ? change(current) : null;
      if (current && next && next !== current) {
        await client.query(
          `UPDATE webhooks SET url = $3, events = $4, enabled = $5, disabled_reason = $6, disabled_at = $7, secret = $8,
             previous_secret = $9, previous_secret_expires_at = $10, updated_at = $11 WHERE id = $1 AND tenant_id = $2`,
          [...webhookValues(sealedEndpoint(next, this.sealer)).slice(0, 10), next.updated_at],
        );
      }
      return next;
    });
    this.changed('webhooks', tenantId);
    return next;
  }

  async updateWebhook(tenantId: string, id: string, patch: WebhookPatch): Promise<WebhookEndpoint | null> {
    return this.changeWebhook(tenantId, id, (w) => applyWebhookPatch(w, patch, now()));
  }

  async disableWebhook(tenantId: string, id: string, reason: WebhookDisabledReason): Promise<WebhookEndpoint | null> {
    return this.changeWebhook(tenantId, id, (w) => disabledEndpoint(w, reason, now()));
  }

  async rotateWebhookSecret(
    tenantId: string,
    id: string,
    secret: string,
    previousExpiresAt: string,
  ): Promise<WebhookEndpoint | null> {
    return this.changeWebhook(tenantId, id, (w) => rotatedEndpoint(w, secret, previousExpiresAt, now()));
  }

  async deleteWebhook(tenantId: string, id: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    this.changed('webhooks', tenantId);
    return (result.rowCount ?? 0) > 0;
  }

  private async domainWhere(where: string, values: unknown[]): Promise<SendingDomain[]> {
    const rows = await this.query<DomainRow>(`SELECT ${DOMAIN_COLUMNS} FROM domains WHERE ${where}`, values);
    return rows.map((r) => domainOf(r, this.sealer));
  }

  async createDomain(d: DomainCreate): Promise<SendingDomain> {
    const domain = newDomain(d, now());
    const row = domainRow(domain, this.sealer);
    const columns = DOMAIN_COLUMNS.split(', ') as (keyof DomainRow)[];
    // One statement: the insert happens only if no other tenant holds the name verified, so a
    // verification elsewhere cannot slip in between a check and the write.
    const { rowCount } = await this.pool
      .query(
        `INSERT INTO domains (${DOMAIN_COLUMNS})
           SELECT ${columns.map((_, i) => `$${i + 1}`).join(', ')}
           WHERE NOT EXISTS (SELECT 1 FROM domains WHERE name = $3 AND status = 'verified' AND tenant_id <> $2)`,
        columns.map((c) => row[c]),
      )
      .catch((error: unknown) => {
        throw (error as { code?: string }).code === '23505' ? domainExists(d.name) : error;
      });
    if (rowCount === 0) throw domainTaken(d.name);
    return domain;
  }

  async getDomain(tenantId: string, id: string): Promise<SendingDomain | null> {
    return (await this.domainWhere('tenant_id = $1 AND id = $2', [tenantId, id]))[0] ?? null;
  }

  async listDomains(tenantId: string): Promise<SendingDomain[]> {
    return this.domainWhere('tenant_id = $1 ORDER BY created_at, id', [tenantId]);
  }

  async verifiedDomain(tenantId: string, name: string): Promise<SendingDomain | null> {
    return (await this.domainWhere("tenant_id = $1 AND name = $2 AND status = 'verified'", [tenantId, name]))[0] ?? null;
  }

  async verifiedDomainNames(tenantId: string): Promise<string[]> {
    const rows = await this.query<{ name: string }>(
      "SELECT name FROM domains WHERE tenant_id = $1 AND status = 'verified' ORDER BY name",
      [tenantId],
    );
    return rows.map((r) => r.name);
  }

  async recordDomainCheck(tenantId: string, id: string, check: DomainCheck): Promise<SendingDomain | null> {
    const current = await this.getDomain(tenantId, id);
    if (!current) return null;
    const next = checkedDomain(current, check, now());
    try {
      await this.pool.query(
        'UPDATE domains SET status = $3, checks = $4, checked_at = $5, verified_at = $6, updated_at = $7 WHERE tenant_id = $1 AND id = $2',
        [tenantId, id, next.status, JSON.stringify(next.checks), next.checked_at, next.verified_at, next.updated_at],
      );
    } catch (error) {
      // The partial unique index on verified names: another tenant verified it first.
      throw (error as { code?: string }).code === '23505' ? domainTaken(current.name) : error;
    }
    return next;
  }

  async setTrackingHost(tenantId: string, id: string, host: string | null): Promise<SendingDomain | null> {
    const result = await this.pool.query(
      'UPDATE domains SET tracking_host = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2',
      [tenantId, id, host, now()],
    );
    return (result.rowCount ?? 0) > 0 ? this.getDomain(tenantId, id) : null;
  }

  async deleteDomain(tenantId: string, id: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM domains WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return (result.rowCount ?? 0) > 0;
  }

  private receiptKeyValues(k: NewReceiptKey): unknown[] {
    return [...storedReceiptKey(k, this.sealer), now()];
  }

  async domainOwner(name: string): Promise<string | null> {
    const rows = await this.query<{ tenant_id: string }>(
      "SELECT tenant_id FROM domains WHERE name = $1 AND status = 'verified'",
      [name],
    );
    return rows[0]?.tenant_id ?? null;
  }

  async putQueueSnapshot(hostId: string, rows: QueueRow[]): Promise<void> {
    await this.query(
      `INSERT INTO queue_snapshots (host_id, rows) VALUES ($1, $2)
       ON CONFLICT (host_id) DO UPDATE SET rows = excluded.rows, taken_at = now()`,
      [hostId, JSON.stringify(rows)],
    );
  }

  async queueSnapshotRows(maxAgeMs: number): Promise<QueueRow[]> {
    const kept = await this.query<{ rows: QueueRow[] }>(
      `SELECT rows FROM queue_snapshots WHERE taken_at >= now() - make_interval(secs => $1 / 1000.0)`,
      [maxAgeMs],
    );
    return kept.flatMap((k) => k.rows);
  }

  async deleteQueueSnapshot(hostId: string): Promise<void> {
    await this.query('DELETE FROM queue_snapshots WHERE host_id = $1', [hostId]);
  }

  async putBreakerState(tenantId: string, status: BreakerStatus, since: number): Promise<void> {
    await this.query(
      `INSERT INTO breaker_states (tenant_id, status, since) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id) DO UPDATE SET status = excluded.status, since = excluded.since
       WHERE excluded.since >= breaker_states.since`,
      [tenantId, status, since],
    );
  }

  async breakerStates(): Promise<{ tenant_id: string; status: BreakerStatus }[]> {
    return this.query<{ tenant_id: string; status: BreakerStatus }>(
      'SELECT tenant_id, status FROM breaker_states ORDER BY tenant_id',
    );
  }

  async putReport(r: ReceivedReport): Promise<void> {
    await this.query(
      `INSERT INTO reports (id, tenant_id, rcpt, mail_from, remote_address, received_at, kind, outcome, message_id, reason, findings, excerpt, size)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
      [
        r.id,
        r.tenant_id,
        r.rcpt,
        r.mail_from,
        r.remote_address,
        r.received_at,
        r.kind,
        r.outcome,
        r.message_id,
        r.reason,
        JSON.stringify(r.findings),
        r.excerpt,
        r.size,
      ],
    );
  }

  async listReports(opts: { tenant_id?: string; limit: number; cursor?: string }): Promise<Page<ReceivedReport>> {
    const cursor = decodeCursor(opts.cursor, 2);
    if (cursor?.some((part) => part.includes('\u0000'))) throw badCursor();
    const values: unknown[] = [];
    const param = (v: unknown) => `$${values.push(v)}`;
    const where: string[] = [];
    if (opts.tenant_id !== undefined) where.push(`tenant_id = ${param(opts.tenant_id)}`);
    if (cursor) where.push(`(received_at, id) < (${param(cursor[0])}::timestamptz, ${param(cursor[1])})`);
    let rows: ReceivedReport[];
    try {
      rows = await this.query<ReceivedReport>(
        `SELECT * FROM reports ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY received_at DESC, id DESC LIMIT ${param(opts.limit + 1)}`,
        values,
      );
    } catch (error) {
      // A cursor whose time is no time (22007, 22008) is not one this API handed out.
      const code = (error as { code?: string }).code;
      throw cursor && (code === '22007' || code === '22008') ? badCursor() : error;
    }
    return pageOf(rows, opts.limit, (last) => [last.received_at, last.id]);
  }

  async currentReceiptKey(): Promise<ReceiptKey | null> {
    const [row] = await this.query<ReceiptKeyRow>('SELECT * FROM receipt_keys WHERE retired_at IS NULL');
    return row ? openedReceiptKey(row, this.sealer) : null;
  }

  async createReceiptKey(k: NewReceiptKey): Promise<ReceiptKey> {
    await this.query(
      'INSERT INTO receipt_keys (kid, public_jwk, private_key, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
      this.receiptKeyValues(k),
    );
    return (await this.currentReceiptKey())!;
  }

  /** Under a table lock: two rotations at once run one after the other, and each leaves one current key. */
  async rotateReceiptKey(k: NewReceiptKey): Promise<ReceiptKey> {
    const row = await inTransaction(this.pool, async (client) => {
      await client.query('LOCK TABLE receipt_keys IN SHARE ROW EXCLUSIVE MODE');
      await client.query('UPDATE receipt_keys SET retired_at = $1 WHERE retired_at IS NULL', [now()]);
      const { rows } = await client.query<ReceiptKeyRow>({
        text: 'INSERT INTO receipt_keys (kid, public_jwk, private_key, created_at) VALUES ($1, $2, $3, $4) RETURNING *',
        values: this.receiptKeyValues(k),
        types: TYPES,
      });
      return rows[0]!;
    });
    return openedReceiptKey(row, this.sealer);
  }

  async listReceiptKeys(): Promise<ReceiptPublicKey[]> {
    const rows = await this.query<Omit<ReceiptKeyRow, 'private_key'>>(
      'SELECT kid, public_jwk, created_at, retired_at FROM receipt_keys ORDER BY created_at, kid',
    );
    return rows.map(publicReceiptKey);
  }

  async verifiedDomainByName(name: string): Promise<SendingDomain | null> {
    return (await this.domainWhere("name = $1 AND status = 'verified'", [name]))[0] ?? null;
  }

  async createAudience(a: Pick<Audience, 'id' | 'tenant_id' | 'name'>): Promise<Audience> {
    const audience: Audience = { ...a, contacts: 0, created_at: now() };
    await this.query('INSERT INTO audiences (id, tenant_id, name, created_at) VALUES ($1, $2, $3, $4)', [
      a.id,
      a.tenant_id,
      a.name,
      audience.created_at,
    ]);
    return audience;
  }

  async getAudience(tenantId: string, id: string): Promise<Audience | null> {
    const [row] = await this.query<Audience>(`SELECT ${AUDIENCE_COLUMNS} FROM audiences a WHERE a.tenant_id = $1 AND a.id = $2`, [
      tenantId,
      id,
    ]);
    return row ?? null;
  }

  async listAudiences(tenantId: string): Promise<Audience[]> {
    return this.query<Audience>(
      `SELECT ${AUDIENCE_COLUMNS} FROM audiences a WHERE a.tenant_id = $1 ORDER BY a.created_at, a.id`,
      [tenantId],
    );
  }

  async deleteAudience(tenantId: string, id: string): Promise<boolean> {
    // The contacts go with it (ON DELETE CASCADE).
    const result = await this.pool.query('DELETE FROM audiences WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return (result.rowCount ?? 0) > 0;
  }

  async createContact(c: ContactCreate): Promise<Contact> {
    const at = now();
    try {
      // One statement: the contact and its trigger (when an automation starts on it) together.
      await this.query(
        `WITH added AS (
           INSERT INTO contacts (${CONTACT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id
         )
         INSERT INTO contact_triggers (contact_id, tenant_id, audience_id, email, added_at)
           SELECT id, $2, $3, $4, $8 FROM added WHERE ${STARTS_ON_CONTACT_ADDED}`,
        [c.id, c.tenant_id, c.audience_id, c.email, c.name, JSON.stringify(c.data), c.unsubscribed, at],
      );
    } catch (error) {
      throw (error as { code?: string }).code === '23505' ? contactExists(c.email) : error;
    }
    return { ...c, created_at: at, updated_at: at };
  }

  async upsertContacts(tenantId: string, audienceId: string, rows: ContactUpsert[]): Promise<ContactsUpserted> {
    // One INSERT … ON CONFLICT DO UPDATE per kind of row (whether it gives a name, an
    // unsubscribed flag), its emails distinct (the import refuses a repeat): each row finds its
    // contact by the unique index. An UPDATE joined to the batch was planned on statistics not yet
    // taken (a new audience, mid-import) and scanned every contact for each row: each batch took
    // longer than the last, 10 s a batch at 40,000 contacts.
    const kinds = new Map<string, ContactUpsert[]>();
    for (const r of rows) {
      const kind = `${r.name !== undefined} ${r.unsubscribed !== undefined}`;
      const group = kinds.get(kind);
      if (group) group.push(r);
      else kinds.set(kind, [r]);
    }
    return inTransaction(this.pool, async (client) => {
      const added: string[] = [];
      let updated = 0;
      for (const group of kinds.values()) {
        const sets = [
          'data = contacts.data || EXCLUDED.data',
          'updated_at = EXCLUDED.updated_at',
          ...(group[0]!.name !== undefined ? ['name = EXCLUDED.name'] : []),
          ...(group[0]!.unsubscribed !== undefined ? ['unsubscribed = EXCLUDED.unsubscribed'] : []),
        ];
        const batch = JSON.stringify(
          group.map((r) => ({
            id: r.id,
            email: r.email,
            name: r.name ?? null,
            data: r.data,
            unsubscribed: r.unsubscribed ?? false,
          })),
        );
        const { rows: done } = await client.query<{ id: string; inserted: boolean }>(
          `INSERT INTO contacts (${CONTACT_COLUMNS})
             SELECT r.id, $1, $2, r.email, r.name, r.data, r.unsubscribed, $4, $4
             FROM jsonb_to_recordset($3::jsonb) AS r(id text, email text, name text, data jsonb, unsubscribed boolean)
           ON CONFLICT (audience_id, email) DO UPDATE SET ${sets.join(', ')} WHERE contacts.tenant_id = $1
           RETURNING id, (xmax = 0) AS inserted`,
          [tenantId, audienceId, batch, now()],
        );
        for (const row of done) {
          if (row.inserted) added.push(row.id);
          else updated++;
        }
      }
      if (added.length > 0) {
        await client.query(
          `INSERT INTO contact_triggers (contact_id, tenant_id, audience_id, email, added_at)
             SELECT id, tenant_id, audience_id, email, created_at FROM contacts WHERE id = ANY($1) AND ${STARTS_ON_CONTACT_ADDED}`,
          [added, tenantId, audienceId],
        );
      }
      return { added: added.length, updated, added_ids: added };
    });
  }

  async pendingContactTriggers(before: string, limit: number): Promise<ContactTrigger[]> {
    return this.query<ContactTrigger>(
      `SELECT contact_id, tenant_id, audience_id, email FROM contact_triggers
         WHERE added_at < $1::timestamptz ORDER BY added_at, contact_id LIMIT $2`,
      [before, limit],
    );
  }

  async ackContactTriggers(contactIds: readonly string[]): Promise<void> {
    if (contactIds.length > 0) await this.query('DELETE FROM contact_triggers WHERE contact_id = ANY($1)', [contactIds]);
  }

  async getContact(tenantId: string, audienceId: string, idOrEmail: string): Promise<Contact | null> {
    const byId = isContactId(idOrEmail);
    const [row] = await this.query<ContactRow>(
      `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE tenant_id = $1 AND audience_id = $2 AND ${byId ? 'id' : 'email'} = $3`,
      [tenantId, audienceId, byId ? idOrEmail : normalizeAddress(idOrEmail)],
    );
    return row ? contactOf(row) : null;
  }

  async updateContact(tenantId: string, audienceId: string, id: string, patch: ContactPatch): Promise<Contact | null> {
    const current = await this.getContact(tenantId, audienceId, id);
    if (!current) return null;
    const next = patchedContact(current, patch, now());
    try {
      await this.query('UPDATE contacts SET email = $1, name = $2, data = $3, unsubscribed = $4, updated_at = $5 WHERE id = $6', [
        next.email,
        next.name,
        JSON.stringify(next.data),
        next.unsubscribed,
        next.updated_at,
        id,
      ]);
    } catch (error) {
      throw (error as { code?: string }).code === '23505' ? contactExists(next.email) : error;
    }
    return next;
  }

  async deleteContact(tenantId: string, audienceId: string, id: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM contacts WHERE tenant_id = $1 AND audience_id = $2 AND id = $3', [
      tenantId,
      audienceId,
      id,
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async listContacts(tenantId: string, audienceId: string, opts: { limit: number; cursor?: string }): Promise<Page<Contact>> {
    const after = decodeCursor(opts.cursor, 1)?.[0] ?? '';
    const rows = await this.query<ContactRow>(
      `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE audience_id = $1 AND tenant_id = $2 AND id > $3 ORDER BY id LIMIT $4`,
      [audienceId, tenantId, after, opts.limit + 1],
    );
    return pageOf(rows, opts.limit, (last) => [last.id], contactOf);
  }

  async createAutomation(a: AutomationCreate): Promise<Automation> {
    const at = now();
    const automation: Automation = { ...a, enabled: true, created_at: at, updated_at: at };
    const values = automationValues(automation);
    await this.query(
      `INSERT INTO automations (${AUTOMATION_COLUMNS}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
      values,
    );
    this.changed('automations', automation.tenant_id);
    return automation;
  }

  async getAutomation(tenantId: string, id: string): Promise<Automation | null> {
    const [row] = await this.query<AutomationRow>(
      `SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return row ? automationOf(row) : null;
  }

  async listAutomations(tenantId: string): Promise<Automation[]> {
    const rows = await this.query<AutomationRow>(
      `SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = $1 ORDER BY created_at, id`,
      [tenantId],
    );
    return rows.map(automationOf);
  }

  async automationsTriggeredBy(tenantId: string, type: AutomationTrigger['type'], key: string): Promise<Automation[]> {
    const enabled = await this.tenantRows('automations', tenantId, async () =>
      (
        await this.query<AutomationRow>(
          `SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = $1 AND enabled ORDER BY created_at, id`,
          [tenantId],
        )
      ).map(automationOf),
    );
    return triggeredBy(enabled, type, key);
  }

  async updateAutomation(tenantId: string, id: string, patch: AutomationPatch): Promise<Automation | null> {
    const current = await this.getAutomation(tenantId, id);
    if (!current) return null;
    const next = patchedAutomation(current, patch, now());
    await this.query('UPDATE automations SET name = $1, enabled = $2, updated_at = $3 WHERE id = $4', [
      next.name,
      next.enabled,
      next.updated_at,
      id,
    ]);
    this.changed('automations', tenantId);
    return next;
  }

  async deleteAutomation(tenantId: string, id: string): Promise<boolean> {
    // Its runs' rows go with it (ON DELETE CASCADE).
    const result = await this.pool.query('DELETE FROM automations WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    this.changed('automations', tenantId);
    return (result.rowCount ?? 0) > 0;
  }

  async putAutomationRun(r: AutomationRun): Promise<void> {
    await this.query(
      `INSERT INTO automation_runs (${RUN_COLUMNS})
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1 FROM automations WHERE id = $3)
       ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, reason = EXCLUDED.reason, updated_at = EXCLUDED.updated_at
         WHERE automation_runs.updated_at <= EXCLUDED.updated_at`,
      runValues(r),
    );
  }

  async listAutomationRuns(
    tenantId: string,
    automationId: string,
    opts: { limit: number; cursor?: string },
  ): Promise<Page<AutomationRun>> {
    const after = decodeCursor(opts.cursor, 2);
    const rows = await this.query<AutomationRun>(
      `SELECT ${RUN_COLUMNS} FROM automation_runs WHERE automation_id = $1 AND tenant_id = $2
         AND ($3::timestamptz IS NULL OR (started_at, id) < ($3::timestamptz, $4))
       ORDER BY started_at DESC, id DESC LIMIT $5`,
      [automationId, tenantId, after?.[0] ?? null, after?.[1] ?? '', opts.limit + 1],
    );
    return pageOf(rows, opts.limit, (last) => [last.started_at, last.id]);
  }

  async createBroadcast(b: BroadcastCreate): Promise<Broadcast> {
    const broadcast = draftBroadcast(b, now());
    const params = Array.from({ length: 15 }, (_, i) => `$${i + 1}`).join(', ');
    await this.query(
      `INSERT INTO broadcasts (${BROADCAST_INSERT_COLUMNS}) VALUES (${params})`,
      broadcastValues(broadcast, b.sandbox),
    );
    return broadcast;
  }

  async getBroadcast(tenantId: string, id: string): Promise<Broadcast | null> {
    const [row] = await this.query<BroadcastRow>(`SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ]);
    return row ? broadcastOf(row) : null;
  }

  async listBroadcasts(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<Broadcast>> {
    const cursor = decodeCursor(opts.cursor, 2);
    if (cursor && Number.isNaN(Date.parse(cursor[0]!))) throw badCursor();
    const rows = cursor
      ? await this.query<BroadcastRow>(
          `SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE tenant_id = $1 AND (created_at, id) < ($2::timestamptz, $3)
             ORDER BY created_at DESC, id DESC LIMIT $4`,
          [tenantId, cursor[0], cursor[1], opts.limit + 1],
        )
      : await this.query<BroadcastRow>(
          `SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
          [tenantId, opts.limit + 1],
        );
    return broadcastPage(rows, opts.limit);
  }

  async setBroadcastState(tenantId: string, id: string, s: BroadcastState): Promise<void> {
    await this.query(
      'UPDATE broadcasts SET status = $3, send_at = $4, paused = $5, progress = $6, updated_at = $7 WHERE tenant_id = $1 AND id = $2',
      [tenantId, id, s.status, s.send_at, s.paused && JSON.stringify(s.paused), JSON.stringify(s.progress), now()],
    );
  }

  async deleteBroadcast(tenantId: string, id: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const result = await client.query('DELETE FROM broadcasts WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
      if ((result.rowCount ?? 0) === 0) return false;
      await client.query('DELETE FROM broadcast_events WHERE broadcast_id = $1', [id]);
      return true;
    });
  }

  async countBroadcastEvent(e: { broadcast_id: string; kind: BroadcastEventKind; message_id: string }): Promise<void> {
    await this.query('INSERT INTO broadcast_events (broadcast_id, kind, message_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      e.broadcast_id,
      e.kind,
      e.message_id,
    ]);
  }

  async broadcastCounts(broadcastId: string): Promise<Record<BroadcastEventKind, number>> {
    const rows = await this.query<{ kind: string; n: string }>(
      'SELECT kind, count(*) AS n FROM broadcast_events WHERE broadcast_id = $1 GROUP BY kind',
      [broadcastId],
    );
    return countsOf(rows);
  }

  async createInboundRoute(r: InboundRouteCreate): Promise<InboundRoute> {
    const route = newRoute(r, now());
    try {
      await this.query(`INSERT INTO inbound_routes (${ROUTE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
        route.id,
        route.tenant_id,
        route.match,
        route.domain,
        route.action,
        route.endpoint_id,
        route.created_at,
        route.updated_at,
      ]);
    } catch (error) {
      throw (error as { code?: string }).code === '23505' ? routeExists(r.match) : error;
    }
    return route;
  }

  async getInboundRoute(tenantId: string, id: string): Promise<InboundRoute | null> {
    const [row] = await this.query<InboundRoute>(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ]);
    return row ?? null;
  }

  async listInboundRoutes(tenantId: string): Promise<InboundRoute[]> {
    return this.query<InboundRoute>(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE tenant_id = $1 ORDER BY created_at, id`, [
      tenantId,
    ]);
  }

  async inboundRoutesOn(domain: string): Promise<InboundRoute[]> {
    return this.query<InboundRoute>(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE domain = $1 ORDER BY created_at, id`, [
      domain,
    ]);
  }

  async updateInboundRoute(tenantId: string, id: string, patch: InboundRoutePatch): Promise<InboundRoute | null> {
    const current = await this.getInboundRoute(tenantId, id);
    if (!current) return null;
    const next = patchedRoute(current, patch, now());
    try {
      await this.query(
        'UPDATE inbound_routes SET match = $3, domain = $4, action = $5, endpoint_id = $6, updated_at = $7 WHERE tenant_id = $1 AND id = $2',
        [tenantId, id, next.match, next.domain, next.action, next.endpoint_id, next.updated_at],
      );
    } catch (error) {
      throw (error as { code?: string }).code === '23505' ? routeExists(next.match) : error;
    }
    return next;
  }

  async deleteInboundRoute(tenantId: string, id: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM inbound_routes WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return (result.rowCount ?? 0) > 0;
  }

  async putInboundMessage(m: InboundMessageCreate): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const inserted = await client.query(
        `INSERT INTO inbound_messages (${INBOUND_MESSAGE_COLUMNS}, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
        [
          m.id,
          m.tenant_id,
          m.route_id,
          m.mail_from,
          JSON.stringify(m.rcpt_to),
          m.remote_address,
          m.received_at,
          JSON.stringify(m.payload),
          m.raw.length,
          m.raw,
        ],
      );
      if (inserted.rowCount === 0) return;
      for (const [n, a] of m.attachments.entries()) {
        await client.query(
          'INSERT INTO inbound_attachments (message_id, n, filename, content_type, size, content_id, content) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [m.id, n, a.filename, a.content_type, a.size, a.content_id, a.content],
        );
      }
    });
  }

  async getInboundMessage(tenantId: string, id: string): Promise<InboundMessage | null> {
    const [row] = await this.query<InboundMessage>(
      `SELECT ${INBOUND_MESSAGE_COLUMNS} FROM inbound_messages WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return row ?? null;
  }

  async listInboundMessages(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<InboundMessage>> {
    const cursor = decodeCursor(opts.cursor, 2);
    if (cursor && Number.isNaN(Date.parse(cursor[0]!))) throw badCursor();
    const rows = cursor
      ? await this.query<InboundMessage>(
          `SELECT ${INBOUND_MESSAGE_COLUMNS} FROM inbound_messages WHERE tenant_id = $1 AND (received_at, id) < ($2, $3)
             ORDER BY received_at DESC, id DESC LIMIT $4`,
          [tenantId, cursor[0], cursor[1], opts.limit + 1],
        )
      : await this.query<InboundMessage>(
          `SELECT ${INBOUND_MESSAGE_COLUMNS} FROM inbound_messages WHERE tenant_id = $1 ORDER BY received_at DESC, id DESC LIMIT $2`,
          [tenantId, opts.limit + 1],
        );
    return pageOf(rows, opts.limit, (last) => [last.received_at, last.id]);
  }

  async inboundRaw(tenantId: string, id: string): Promise<Buffer | null> {
    const [row] = await this.query<{ raw: Buffer }>('SELECT raw FROM inbound_messages WHERE tenant_id = $1 AND id = $2', [
      tenantId,
      id,
    ]);
    return row ? row.raw : null;
  }

  async inboundAttachment(tenantId: string, id: string, n: number): Promise<InboundAttachment | null> {
    const [row] = await this.query<InboundAttachment>(
      `SELECT a.filename, a.content_type, a.size, a.content_id, a.content FROM inbound_attachments a
         JOIN inbound_messages m ON m.id = a.message_id WHERE m.tenant_id = $1 AND a.message_id = $2 AND a.n = $3`,
      [tenantId, id, n],
    );
    return row ?? null;
  }

  async close(): Promise<void> {
    await this.changes?.close();
    await this.pool.end();
  }
}
