// The catalog on a SQLite file (embedded runtime).
import type Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import { fileURLToPath } from 'node:url';
import { openSqlite, type Db } from '../../lib/sqlite.ts';
import { GroupCommitter, type EncodedWrites } from '../../lib/committer.ts';
import { PresenceFilter } from '../../lib/presence.filter.ts';
import { moduleBeside } from '../../lib/worker.ts';
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
  Contact,
  ContactsUpserted,
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
  EngagementEvent,
  Catalog,
  DomainCheck,
  DomainCreate,
  KeySettings,
  NewKey,
  NewReceiptKey,
  InboxSession,
  Page,
  BreakerStatus,
  QueueRow,
  Quota,
  ReceivedReport,
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
} from '../catalog.port.ts';
import { keyRecord } from '../catalog.port.ts';
import { badCursor, decodeCursor, encodeCursor, pageOf } from '../cursor.ts';
import {
  broadcastEventWrites,
  broadcastStateWrites,
  captureWrites,
  engagementWrites,
  inboundWrites,
  indexPendingWrites,
} from './catalog.apply.ts';
import type { StoredEvent } from '../../events/email.event.ts';
import { storedEngagement, type EngagementRow } from '../engagement.rows.ts';
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
import { INBOUND_MESSAGE_COLUMNS, ROUTE_COLUMNS, newRoute, patchedRoute, routeExists } from '../inbound.rows.ts';
import { openedReceiptKey, publicReceiptKey, storedReceiptKey, type ReceiptKeyRow } from '../receipt.keys.stored.ts';

interface TenantRow {
  id: string;
  name: string;
  default_from: string | null;
  quota: string;
  queue_weight: number;
  created_at: string;
}

const KEY_COLUMNS =
  'id, tenant_id, kind, scope, sandbox, name, prefix, created_at, revoked_at, allowed_origins, rate_per_key, rate_per_ip';

type KeyRow = Omit<ApiKey, 'sandbox' | 'allowed_origins' | 'rate_limit'> & {
  sandbox: number;
  allowed_origins: string;
  rate_per_key: number | null;
  rate_per_ip: number | null;
};

const toKey = ({ sandbox, allowed_origins, rate_per_key, rate_per_ip, ...row }: KeyRow): ApiKey => ({
  ...row,
  sandbox: sandbox === 1,
  allowed_origins: JSON.parse(allowed_origins) as string[],
  rate_limit: { per_key: rate_per_key, per_ip: rate_per_ip },
});

const toTenant = (r: TenantRow): Tenant => ({ ...r, quota: JSON.parse(r.quota) as Quota });

// Stored as from_addr and to_addr (FROM and TO are SQL keywords), read back under their API names.
const TEMPLATE_COLUMNS =
  'id, tenant_id, slug, name, subject, html, text, from_addr AS "from", to_addr AS "to", reply_to, created_at, updated_at';

const now = () => new Date().toISOString();

/** SQLite binds no booleans: flags are stored as 0 or 1. */
const sqliteValue = (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

type InboundMessageRow = Omit<InboundMessage, 'rcpt_to' | 'payload'> & { rcpt_to: string; payload: string };
const inboundMessageOf = (r: InboundMessageRow): InboundMessage => ({
  ...r,
  rcpt_to: JSON.parse(r.rcpt_to),
  payload: JSON.parse(r.payload),
});

/** A capture's stored body; one from before key ids (or signed captures) were recorded has none. */
const capturedOf = (body: string): CapturedMessage => {
  const c = JSON.parse(body) as Omit<CapturedMessage, 'key_id' | 'dkim' | 'source'> & Partial<CapturedMessage>;
  return { ...c, key_id: c.key_id ?? null, dkim: c.dkim ?? null, source: c.source ?? null };
};

type WebhookRow = Omit<WebhookEndpoint, 'events' | 'enabled'> & { events: string; enabled: number };

const toWebhook = (r: WebhookRow, sealer: Sealer): WebhookEndpoint =>
  openedEndpoint({ ...r, events: JSON.parse(r.events) as string[], enabled: r.enabled === 1 }, sealer);
const fromWebhook = (w: WebhookEndpoint, sealer: Sealer): WebhookRow => ({
  ...sealedEndpoint(w, sealer),
  events: JSON.stringify(w.events),
  enabled: w.enabled ? 1 : 0,
});

/** A unique-constraint failure on a template is a taken slug; anything else stays what it is. */
function slugTaken(error: unknown, slug: string): unknown {
  return (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE'
    ? new GatepostError('template_exists', `A template with slug "${slug}" already exists.`)
    : error;
}

const MAX_CACHED_TENANTS = 10_000;

const suppressionKey = (tenantId: string, address: string) => `${tenantId}\0${address}`;

/** Every suppression in the file, read once at start. */
function suppressionsOnDisk(db: Db): PresenceFilter {
  const rows = (db.prepare('SELECT COUNT(*) AS n FROM suppressions').get() as { n: number }).n;
  const filter = new PresenceFilter(rows * 2);
  const all = db.prepare('SELECT tenant_id, address FROM suppressions').raw();
  for (const [tenantId, address] of all.iterate() as Iterable<[string, string]>) filter.add(suppressionKey(tenantId, address));
  return filter;
}

export class SqliteCatalog implements Catalog {
  /**
   * This thread's connection. The writer thread commits to the same file at any moment, so every
   * transaction here begins IMMEDIATE: a deferred one that read before it wrote would be refused
   * at its first write (SQLITE_BUSY, no waiting) whenever the writer had committed in between.
   */
  private readonly db: Db;
  private readonly statements = new Map<string, Database.Statement>();
  /** The writer of captures and received messages, started on the first: most catalogs (tests, live keys) never write one. */
  private writer: GroupCommitter | null = null;
  /**
   * Each tenant's enabled endpoints, as `webhooksFor` answers them for every lifecycle event.
   * Only this process writes the embedded catalog, so a change here is the only way they change;
   * every write of an endpoint forgets its tenant's entry.
   */
  private readonly enabledWebhooks = new LRUCache<string, WebhookEndpoint[]>({ max: MAX_CACHED_TENANTS });
  /**
   * Each tenant's enabled automations, as `automationsTriggeredBy` finds them for every lifecycle
   * event (a click each), kept as `enabledWebhooks` is: every write of an automation forgets its
   * tenant's entry. The query a look-up made cost 3.6 us, 13 % of the event loop's time a click
   * under bench:tracking (2026-11-27).
   */
  private readonly enabledAutomations = new LRUCache<string, Automation[]>({ max: MAX_CACHED_TENANTS });
  /**
   * Which (tenant, address) pairs may be suppressed: every send looks up each recipient (the gate,
   * then admission), and almost none is listed, so a "no" here answers without a SELECT. Read at
   * start, told of each suppression before it is written.
   */
  private readonly suppressed: PresenceFilter;

  /** `sealer` seals webhook secrets at rest (lib/sealed.ts). */
  constructor(
    private readonly file: string,
    private readonly sealer: Sealer = plainSealer,
  ) {
    this.db = openSqlite(file, fileURLToPath(new URL('./migrations', import.meta.url)));
    this.suppressed = suppressionsOnDisk(this.db);
  }

  /** A prepared statement, prepared once per SQL text. */
  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  async createTenant(t: { id: string; name: string; default_from: string | null; quota: Quota }): Promise<Tenant> {
    const row: TenantRow = { ...t, quota: JSON.stringify(t.quota), queue_weight: 1, created_at: now() };
    this.sql(
      'INSERT INTO tenants (id, name, default_from, quota, queue_weight, created_at) VALUES (@id, @name, @default_from, @quota, @queue_weight, @created_at)',
    ).run(row);
    return toTenant(row);
  }

  async getTenant(id: string): Promise<Tenant | null> {
    const row = this.sql('SELECT * FROM tenants WHERE id = ?').get(id) as TenantRow | undefined;
    return row ? toTenant(row) : null;
  }

  async listTenants(): Promise<Tenant[]> {
    return (this.sql('SELECT * FROM tenants ORDER BY created_at, id').all() as TenantRow[]).map(toTenant);
  }

  async updateTenant(
    id: string,
    patch: Partial<Pick<Tenant, 'name' | 'default_from' | 'quota' | 'queue_weight'>>,
  ): Promise<Tenant | null> {
    // Read and write with no await between: a concurrent update cannot slip in and be overwritten.
    const row = this.sql('SELECT * FROM tenants WHERE id = ?').get(id) as TenantRow | undefined;
    if (!row) return null;
    const next = { ...toTenant(row), ...patch };
    this.sql('UPDATE tenants SET name = ?, default_from = ?, quota = ?, queue_weight = ? WHERE id = ?').run(
      next.name,
      next.default_from,
      JSON.stringify(next.quota),
      next.queue_weight,
      id,
    );
    return next;
  }

  async createKey(k: NewKey, hash: string): Promise<ApiKey> {
    const key = keyRecord(k, now());
    this.sql(
      `INSERT INTO api_keys (id, tenant_id, kind, scope, sandbox, name, prefix, hash, created_at, allowed_origins, rate_per_key, rate_per_ip)
         VALUES (@id, @tenant_id, @kind, @scope, @sandbox, @name, @prefix, @hash, @created_at, @allowed_origins, @rate_per_key, @rate_per_ip)`,
    ).run({
      id: key.id,
      tenant_id: key.tenant_id,
      kind: key.kind,
      scope: key.scope,
      sandbox: key.sandbox ? 1 : 0,
      name: key.name,
      prefix: key.prefix,
      hash,
      created_at: key.created_at,
      allowed_origins: JSON.stringify(key.allowed_origins),
      rate_per_key: key.rate_limit.per_key,
      rate_per_ip: key.rate_limit.per_ip,
    });
    return key;
  }

  private keyRow(where: string, ...values: unknown[]): ApiKey | null {
    const row = this.sql(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE ${where}`).get(...values) as KeyRow | undefined;
    return row ? toKey(row) : null;
  }

  async findKeyByHash(hash: string): Promise<ApiKey | null> {
    return this.keyRow('hash = ? AND revoked_at IS NULL', hash);
  }

  async listKeys(tenantId: string): Promise<ApiKey[]> {
    const rows = this.sql(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id`).all(tenantId);
    return (rows as KeyRow[]).map(toKey);
  }

  async revokeKey(tenantId: string, keyId: string): Promise<ApiKey | null> {
    this.sql('UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL').run(
      now(),
      tenantId,
      keyId,
    );
    return this.keyRow('tenant_id = ? AND id = ?', tenantId, keyId);
  }

  async updateKey(tenantId: string, keyId: string, patch: Partial<KeySettings>): Promise<ApiKey | null> {
    // Read and write with no await between: a concurrent update cannot slip in and be overwritten.
    const current = this.keyRow('tenant_id = ? AND id = ?', tenantId, keyId);
    if (!current) return null;
    const next = { ...current, ...patch };
    this.sql('UPDATE api_keys SET name = ?, allowed_origins = ?, rate_per_key = ?, rate_per_ip = ? WHERE id = ?').run(
      next.name,
      JSON.stringify(next.allowed_origins),
      next.rate_limit.per_key,
      next.rate_limit.per_ip,
      keyId,
    );
    return next;
  }

  async createTemplate(tenantId: string, id: string, f: TemplateFields): Promise<Template> {
    const at = now();
    const template: Template = { ...f, id, tenant_id: tenantId, created_at: at, updated_at: at };
    try {
      this.sql(
        `INSERT INTO templates (id, tenant_id, slug, name, subject, html, text, from_addr, to_addr, reply_to, created_at, updated_at)
         VALUES (@id, @tenant_id, @slug, @name, @subject, @html, @text, @from, @to, @reply_to, @created_at, @updated_at)`,
      ).run(template);
    } catch (error) {
      throw slugTaken(error, f.slug);
    }
    return template;
  }

  async getTemplate(tenantId: string, slug: string): Promise<Template | null> {
    const row = this.sql(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE tenant_id = ? AND slug = ?`).get(tenantId, slug);
    return (row as Template | undefined) ?? null;
  }

  async listTemplates(tenantId: string): Promise<Template[]> {
    return this.sql(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE tenant_id = ? ORDER BY slug`).all(tenantId) as Template[];
  }

  async updateTemplate(tenantId: string, slug: string, patch: Partial<TemplateFields>): Promise<Template | null> {
    // Read and write with no await between: a concurrent update cannot slip in and be overwritten.
    const current = this.sql(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE tenant_id = ? AND slug = ?`).get(tenantId, slug) as
      Template | undefined;
    if (!current) return null;
    const next = { ...current, ...patch, updated_at: now() };
    try {
      this.sql(
        `UPDATE templates SET slug = ?, name = ?, subject = ?, html = ?, text = ?, from_addr = ?, to_addr = ?,
           reply_to = ?, updated_at = ? WHERE id = ?`,
      ).run(
        next.slug,
        next.name,
        next.subject,
        next.html,
        next.text,
        next.from,
        next.to,
        next.reply_to,
        next.updated_at,
        current.id,
      );
    } catch (error) {
      throw slugTaken(error, next.slug);
    }
    return next;
  }

  async deleteTemplate(tenantId: string, slug: string): Promise<boolean> {
    return this.sql('DELETE FROM templates WHERE tenant_id = ? AND slug = ?').run(tenantId, slug).changes > 0;
  }

  async putSuppression(s: Suppression): Promise<void> {
    this.suppressed.add(suppressionKey(s.tenant_id, s.address));
    this.sql(
      `INSERT INTO suppressions (tenant_id, address, reason, detail, created_at) VALUES (@tenant_id, @address, @reason, @detail, @created_at)
         ON CONFLICT DO UPDATE SET reason = excluded.reason, detail = excluded.detail, created_at = excluded.created_at`,
    ).run(s);
  }

  async deleteSuppression(tenantId: string, address: string): Promise<void> {
    this.sql('DELETE FROM suppressions WHERE tenant_id = ? AND address = ?').run(tenantId, address);
  }

  async getSuppression(tenantId: string, address: string): Promise<Suppression | null> {
    if (!this.suppressed.mayHave(suppressionKey(tenantId, address))) return null;
    return (
      (this.sql('SELECT * FROM suppressions WHERE tenant_id = ? AND address = ?').get(tenantId, address) as Suppression) ?? null
    );
  }

  async listSuppressions(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<Suppression>> {
    const after = decodeCursor(opts.cursor, 1)?.[0] ?? '';
    const rows = this.sql('SELECT * FROM suppressions WHERE tenant_id = ? AND address > ? ORDER BY address LIMIT ?').all(
      tenantId,
      after,
      opts.limit + 1,
    ) as Suppression[];
    return pageOf(rows, opts.limit, (last) => [last.address]);
  }

  /** Durable once it resolves; captures arriving together share one commit, on the writer's thread. */
  putCapture(c: CapturedMessage): Promise<void> {
    return this.written(captureWrites(c));
  }

  /** Durable once it resolves, in one commit with whatever else reached the writer meanwhile. */
  recordEngagement(events: EngagementEvent[]): Promise<void> {
    return events.length === 0 ? Promise.resolve() : this.written(engagementWrites(events));
  }

  async engagementOf(messageId: string): Promise<StoredEvent[]> {
    const rows = this.sql(
      'SELECT event_id, type, created_at, data FROM engagement WHERE message_id = ? ORDER BY created_at, seq',
    ).all(messageId) as EngagementRow[];
    return rows.map(storedEngagement);
  }

  async forgetEngagement(messageId: string): Promise<void> {
    this.sql('DELETE FROM engagement WHERE message_id = ?').run(messageId);
  }

  /** The catalog's writes made once per message under load go through the group-commit writer (catalog.apply.ts). */
  private written(writes: EncodedWrites): Promise<void> {
    const writer = this.groupWriter();
    return writer.durable(writer.enqueue(writes));
  }

  private groupWriter(): GroupCommitter {
    if (this.writer) return this.writer;
    const writer = new GroupCommitter(this.file, moduleBeside(import.meta.url, 'catalog.apply'), () => {
      // The writes of the failed commit are refused (their callers retry); the next write starts
      // a new writer.
      if (this.writer === writer) this.writer = null;
      void writer.close();
    });
    this.writer = writer;
    return writer;
  }

  async listCaptures(tenantId: string, opts: CaptureQuery): Promise<Page<CapturedMessage>> {
    if (opts.search !== undefined) return this.searchCaptures(tenantId, opts.search, opts);
    const cursor = decodeCursor(opts.cursor, 2);
    // Newest first along captures_recent, or captures_by_key for one key's.
    const where = ['tenant_id = ?'];
    const values: unknown[] = [tenantId];
    if (opts.key_id !== undefined) {
      where.push('key_id = ?');
      values.push(opts.key_id);
    }
    if (cursor) {
      where.push('(captured_at, message_id) < (?, ?)');
      values.push(cursor[0], cursor[1]);
    }
    const rows = this.sql(
      `SELECT body FROM captures WHERE ${where.join(' AND ')} ORDER BY captured_at DESC, message_id DESC LIMIT ?`,
    ).all(...values, opts.limit + 1) as { body: string }[];
    return pageOf(
      rows,
      opts.limit,
      (last) => [last.captured_at, last.message_id],
      (r) => capturedOf(r.body),
    );
  }

  /**
   * A search walks the trigram index newest captured first (its rowids are the order captures
   * were written in: migrations/004_inbox.sql), narrowed to the inbox's tenant and key, and stops
   * at the page's end; its cursor is the last row's place in that order. The writer first indexes
   * the captures it has not yet (catalog.apply.ts), so the search sees every capture made before it.
   */
  private async searchCaptures(tenantId: string, search: string, opts: CaptureQuery): Promise<Page<CapturedMessage>> {
    const after = decodeCursor(opts.cursor, 1)?.[0];
    if (after !== undefined && !/^[1-9][0-9]{0,15}$/.test(after)) throw badCursor();
    await this.written(indexPendingWrites());
    const phrase = (text: string) => `"${text.replaceAll('"', '""')}"`;
    const match = [
      `tenant_id : ${phrase(tenantId)}`,
      ...(opts.key_id !== undefined ? [`key_id : ${phrase(opts.key_id)}`] : []),
      `{recipient subject body} : ${phrase(search)}`,
    ].join(' AND ');
    // The index's tenant and key are trigram matches, which a longer id could hold: the join checks them exactly.
    const rows = this.sql(
      `SELECT s.rowid AS seq, c.body FROM captures_search s JOIN captures c ON c.tenant_id = ? AND c.message_id = s.message_id
         WHERE captures_search MATCH ? AND s.rowid < ? ${opts.key_id !== undefined ? 'AND c.key_id = ?' : ''}
         ORDER BY s.rowid DESC LIMIT ?`,
    ).all(
      tenantId,
      match,
      after === undefined ? Number.MAX_SAFE_INTEGER : Number(after),
      ...(opts.key_id !== undefined ? [opts.key_id] : []),
      opts.limit + 1,
    ) as { seq: number; body: string }[];
    const page = rows.slice(0, opts.limit);
    const last = page[page.length - 1];
    return {
      data: page.map((r) => capturedOf(r.body)),
      next_cursor: rows.length > opts.limit && last ? encodeCursor([String(last.seq)]) : null,
    };
  }

  async getCapture(tenantId: string, messageId: string): Promise<CapturedMessage | null> {
    const row = this.sql('SELECT body FROM captures WHERE tenant_id = ? AND message_id = ?').get(tenantId, messageId) as
      { body: string } | undefined;
    return row ? capturedOf(row.body) : null;
  }

  async deleteCapture(tenantId: string, messageId: string): Promise<boolean> {
    return (await this.deleteCapturesWhere({ tenant_id: tenantId, message_id: messageId })) > 0;
  }

  async deleteCaptures(tenantId: string, keyId?: string): Promise<number> {
    return this.deleteCapturesWhere({ tenant_id: tenantId, ...(keyId === undefined ? {} : { key_id: keyId }) });
  }

  /** The captures matching every column given, and their search rows (or their place in the line for one), in one transaction. */
  private async deleteCapturesWhere(match: { tenant_id: string; message_id?: string; key_id?: string }): Promise<number> {
    // Captures are written on the writer's thread: wait for those enqueued, so none lands after
    // its delete. (A failed commit refused its captures already: they are not there to delete.)
    await this.writer?.durable().catch(() => undefined);
    const where = Object.keys(match)
      .map((column) => `${column} = ?`)
      .join(' AND ');
    const values = Object.values(match);
    return this.db.transaction(() => {
      // The search table's tenant and message ids are not indexed: this reads it through, which
      // a delete (rare, and by a person) can afford.
      for (const listing of ['captures_search', 'captures_unindexed']) {
        this.sql(
          `DELETE FROM ${listing} WHERE tenant_id = ? AND message_id IN (SELECT message_id FROM captures WHERE ${where})`,
        ).run(match.tenant_id, ...values);
      }
      return this.sql(`DELETE FROM captures WHERE ${where}`).run(...values).changes;
    }).immediate();
  }

  async createInboxSession(s: InboxSession): Promise<void> {
    this.db.transaction(() => {
      this.sql('DELETE FROM inbox_sessions WHERE expires_at <= ?').run(now());
      this.sql('INSERT INTO inbox_sessions (hash, key_id, expires_at) VALUES (?, ?, ?)').run(s.hash, s.key_id, s.expires_at);
    }).immediate();
  }

  async inboxSessionKey(hash: string): Promise<ApiKey | null> {
    return this.keyRow(
      'revoked_at IS NULL AND id = (SELECT key_id FROM inbox_sessions WHERE hash = ? AND expires_at > ?)',
      hash,
      now(),
    );
  }

  async deleteInboxSession(hash: string): Promise<void> {
    this.sql('DELETE FROM inbox_sessions WHERE hash = ?').run(hash);
  }

  async createWebhook(w: WebhookCreate): Promise<WebhookEndpoint> {
    const endpoint = newEndpoint(w, now());
    this.sql(
      `INSERT INTO webhooks (id, tenant_id, url, events, enabled, disabled_reason, disabled_at, secret, previous_secret,
         previous_secret_expires_at, created_at, updated_at)
       VALUES (@id, @tenant_id, @url, @events, @enabled, @disabled_reason, @disabled_at, @secret, @previous_secret,
         @previous_secret_expires_at, @created_at, @updated_at)`,
    ).run(fromWebhook(endpoint, this.sealer));
    this.enabledWebhooks.delete(endpoint.tenant_id);
    return endpoint;
  }

  async getWebhook(tenantId: string, id: string): Promise<WebhookEndpoint | null> {
    const row = this.sql('SELECT * FROM webhooks WHERE tenant_id = ? AND id = ?').get(tenantId, id) as WebhookRow | undefined;
    return row ? toWebhook(row, this.sealer) : null;
  }

  async listWebhooks(tenantId: string): Promise<WebhookEndpoint[]> {
    return (this.sql('SELECT * FROM webhooks WHERE tenant_id = ? ORDER BY created_at, id').all(tenantId) as WebhookRow[]).map(
      (r) => toWebhook(r, this.sealer),
    );
  }

  async webhooksFor(tenantId: string, eventType: string): Promise<WebhookEndpoint[]> {
    return this.enabledEndpoints(tenantId).filter((w) => w.events.includes(eventType));
  }

  private enabledEndpoints(tenantId: string): WebhookEndpoint[] {
    let enabled = this.enabledWebhooks.get(tenantId);
    if (!enabled) {
      enabled = (
        this.sql('SELECT * FROM webhooks WHERE tenant_id = ? AND enabled = 1 ORDER BY created_at, id').all(
          tenantId,
        ) as WebhookRow[]
      ).map((r) => toWebhook(r, this.sealer));
      this.enabledWebhooks.set(tenantId, enabled);
    }
    return enabled;
  }

  /** Read, change and write with no await between: a concurrent change cannot slip in and be lost. */
  private changeWebhook(tenantId: string, id: string, change: (w: WebhookEndpoint) => WebhookEndpoint): WebhookEndpoint | null {
    const row = this.sql('SELECT * FROM webhooks WHERE tenant_id = ? AND id = ?').get(tenantId, id) as WebhookRow | undefined;
    if (!row) return null;
    const current = toWebhook(row, this.sealer);
    const next = change(current);
    if (next === current) return current;
    this.sql(
      `UPDATE webhooks SET url = @url, events = @events, enabled = @enabled, disabled_reason = @disabled_reason,
         disabled_at = @disabled_at, secret = @secret, previous_secret = @previous_secret,
         previous_secret_expires_at = @previous_secret_expires_at, updated_at = @updated_at WHERE id = @id`,
    ).run(fromWebhook(next, this.sealer));
    this.enabledWebhooks.delete(tenantId);
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
    this.enabledWebhooks.delete(tenantId);
    return this.sql('DELETE FROM webhooks WHERE tenant_id = ? AND id = ?').run(tenantId, id).changes > 0;
  }

  private domainWhere(where: string, ...values: unknown[]): SendingDomain[] {
    const rows = this.sql(`SELECT ${DOMAIN_COLUMNS} FROM domains WHERE ${where}`).all(...values) as DomainRow[];
    return rows.map((r) => domainOf(r, this.sealer));
  }

  /** Checks and writes with no await between: nothing can verify the name in between. */
  async createDomain(d: DomainCreate): Promise<SendingDomain> {
    const domain = newDomain(d, now());
    if (this.sql("SELECT 1 FROM domains WHERE name = ? AND status = 'verified' AND tenant_id <> ?").get(d.name, d.tenant_id)) {
      throw domainTaken(d.name);
    }
    try {
      this.sql(`INSERT INTO domains (${DOMAIN_COLUMNS}) VALUES (${DOMAIN_COLUMNS.replace(/(\w+)/g, '@$1')})`).run(
        domainRow(domain, this.sealer),
      );
    } catch (error) {
      throw (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? domainExists(d.name) : error;
    }
    return domain;
  }

  async getDomain(tenantId: string, id: string): Promise<SendingDomain | null> {
    return this.domainWhere('tenant_id = ? AND id = ?', tenantId, id)[0] ?? null;
  }

  async listDomains(tenantId: string): Promise<SendingDomain[]> {
    return this.domainWhere('tenant_id = ? ORDER BY created_at, id', tenantId);
  }

  async verifiedDomain(tenantId: string, name: string): Promise<SendingDomain | null> {
    return this.domainWhere("tenant_id = ? AND name = ? AND status = 'verified'", tenantId, name)[0] ?? null;
  }

  async verifiedDomainNames(tenantId: string): Promise<string[]> {
    const rows = this.sql("SELECT name FROM domains WHERE tenant_id = ? AND status = 'verified' ORDER BY name").all(tenantId);
    return (rows as { name: string }[]).map((r) => r.name);
  }

  async recordDomainCheck(tenantId: string, id: string, check: DomainCheck): Promise<SendingDomain | null> {
    const current = await this.getDomain(tenantId, id);
    if (!current) return null;
    const next = checkedDomain(current, check, now());
    try {
      this.sql('UPDATE domains SET status = ?, checks = ?, checked_at = ?, verified_at = ?, updated_at = ? WHERE id = ?').run(
        next.status,
        JSON.stringify(next.checks),
        next.checked_at,
        next.verified_at,
        next.updated_at,
        id,
      );
    } catch (error) {
      // The partial unique index on verified names: another tenant verified it first.
      throw (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? domainTaken(current.name) : error;
    }
    return next;
  }

  async setTrackingHost(tenantId: string, id: string, host: string | null): Promise<SendingDomain | null> {
    const updated = this.sql('UPDATE domains SET tracking_host = ?, updated_at = ? WHERE tenant_id = ? AND id = ?').run(
      host,
      now(),
      tenantId,
      id,
    );
    return updated.changes > 0 ? this.getDomain(tenantId, id) : null;
  }

  async deleteDomain(tenantId: string, id: string): Promise<boolean> {
    return this.sql('DELETE FROM domains WHERE tenant_id = ? AND id = ?').run(tenantId, id).changes > 0;
  }

  private receiptKeyRow(where: string, ...values: unknown[]): ReceiptKey | null {
    const row = this.sql(`SELECT * FROM receipt_keys WHERE ${where}`).get(...values) as ReceiptKeyRow | undefined;
    return row ? openedReceiptKey(row, this.sealer) : null;
  }

  private insertReceiptKey(k: NewReceiptKey, conflict: '' | 'ON CONFLICT DO NOTHING'): void {
    this.sql(`INSERT INTO receipt_keys (kid, public_jwk, private_key, created_at) VALUES (?, ?, ?, ?) ${conflict}`).run(
      ...storedReceiptKey(k, this.sealer),
      now(),
    );
  }

  async domainOwner(name: string): Promise<string | null> {
    const row = this.sql("SELECT tenant_id FROM domains WHERE name = ? AND status = 'verified'").get(name) as
      { tenant_id: string } | undefined;
    return row?.tenant_id ?? null;
  }

  async putQueueSnapshot(hostId: string, rows: QueueRow[]): Promise<void> {
    this.sql(
      `INSERT INTO queue_snapshots (host_id, rows, taken_at) VALUES (?, ?, ?)
       ON CONFLICT (host_id) DO UPDATE SET rows = excluded.rows, taken_at = excluded.taken_at`,
    ).run(hostId, JSON.stringify(rows), Date.now());
  }

  async queueSnapshotRows(maxAgeMs: number): Promise<QueueRow[]> {
    const kept = this.sql('SELECT rows FROM queue_snapshots WHERE taken_at >= ?').all(Date.now() - maxAgeMs) as {
      rows: string;
    }[];
    return kept.flatMap((k) => JSON.parse(k.rows) as QueueRow[]);
  }

  async deleteQueueSnapshot(hostId: string): Promise<void> {
    this.sql('DELETE FROM queue_snapshots WHERE host_id = ?').run(hostId);
  }

  async putBreakerState(tenantId: string, status: BreakerStatus, since: number): Promise<void> {
    this.sql(
      `INSERT INTO breaker_states (tenant_id, status, since) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET status = excluded.status, since = excluded.since
       WHERE excluded.since >= breaker_states.since`,
    ).run(tenantId, status, since);
  }

  async breakerStates(): Promise<{ tenant_id: string; status: BreakerStatus }[]> {
    return this.sql('SELECT tenant_id, status FROM breaker_states ORDER BY tenant_id').all() as {
      tenant_id: string;
      status: BreakerStatus;
    }[];
  }

  async putReport(r: ReceivedReport): Promise<void> {
    this.sql(
      `INSERT INTO reports (id, tenant_id, rcpt, mail_from, remote_address, received_at, kind, outcome, message_id, reason, findings, excerpt, size)
       VALUES (@id, @tenant_id, @rcpt, @mail_from, @remote_address, @received_at, @kind, @outcome, @message_id, @reason, @findings, @excerpt, @size)
       ON CONFLICT DO NOTHING`,
    ).run({ ...r, findings: JSON.stringify(r.findings) });
  }

  async listReports(opts: { tenant_id?: string; limit: number; cursor?: string }): Promise<Page<ReceivedReport>> {
    const cursor = decodeCursor(opts.cursor, 2);
    const where = [
      ...(opts.tenant_id !== undefined ? ['tenant_id = @tenant'] : []),
      ...(cursor ? ['(received_at, id) < (@at, @id)'] : []),
    ];
    const rows = this.sql(
      `SELECT * FROM reports ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY received_at DESC, id DESC LIMIT @limit`,
    ).all({ tenant: opts.tenant_id, at: cursor?.[0], id: cursor?.[1], limit: opts.limit + 1 }) as (Omit<
      ReceivedReport,
      'findings'
    > & {
      findings: string;
    })[];
    return pageOf(
      rows,
      opts.limit,
      (last) => [last.received_at, last.id],
      (r) => ({ ...r, findings: JSON.parse(r.findings) as Record<string, unknown> }),
    );
  }

  async currentReceiptKey(): Promise<ReceiptKey | null> {
    return this.receiptKeyRow('retired_at IS NULL');
  }

  async createReceiptKey(k: NewReceiptKey): Promise<ReceiptKey> {
    this.insertReceiptKey(k, 'ON CONFLICT DO NOTHING');
    return this.receiptKeyRow('retired_at IS NULL')!;
  }

  async rotateReceiptKey(k: NewReceiptKey): Promise<ReceiptKey> {
    this.db.transaction(() => {
      this.sql('UPDATE receipt_keys SET retired_at = ? WHERE retired_at IS NULL').run(now());
      this.insertReceiptKey(k, '');
    }).immediate();
    return this.receiptKeyRow('kid = ?', k.kid)!;
  }

  async listReceiptKeys(): Promise<ReceiptPublicKey[]> {
    const rows = this.sql('SELECT kid, public_jwk, created_at, retired_at FROM receipt_keys ORDER BY created_at, kid').all();
    return (rows as Omit<ReceiptKeyRow, 'private_key'>[]).map(publicReceiptKey);
  }

  async verifiedDomainByName(name: string): Promise<SendingDomain | null> {
    return this.domainWhere("name = ? AND status = 'verified'", name)[0] ?? null;
  }

  async createAudience(a: Pick<Audience, 'id' | 'tenant_id' | 'name'>): Promise<Audience> {
    const audience: Audience = { ...a, contacts: 0, created_at: now() };
    this.sql('INSERT INTO audiences (id, tenant_id, name, created_at) VALUES (?, ?, ?, ?)').run(
      a.id,
      a.tenant_id,
      a.name,
      audience.created_at,
    );
    return audience;
  }

  async getAudience(tenantId: string, id: string): Promise<Audience | null> {
    const row = this.sql(`SELECT ${AUDIENCE_COLUMNS} FROM audiences a WHERE a.tenant_id = ? AND a.id = ?`).get(tenantId, id);
    return (row as Audience | undefined) ?? null;
  }

  async listAudiences(tenantId: string): Promise<Audience[]> {
    return this.sql(`SELECT ${AUDIENCE_COLUMNS} FROM audiences a WHERE a.tenant_id = ? ORDER BY a.created_at, a.id`).all(
      tenantId,
    ) as Audience[];
  }

  async deleteAudience(tenantId: string, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const deleted = this.sql('DELETE FROM audiences WHERE tenant_id = ? AND id = ?').run(tenantId, id).changes > 0;
      if (deleted) this.sql('DELETE FROM contacts WHERE audience_id = ?').run(id);
      return deleted;
    }).immediate();
  }

  async createContact(c: ContactCreate): Promise<Contact> {
    const at = now();
    const contact: Contact = { ...c, created_at: at, updated_at: at };
    try {
      this.db.transaction(() => {
        this.sql(`INSERT INTO contacts (${CONTACT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          c.id,
          c.tenant_id,
          c.audience_id,
          c.email,
          c.name,
          JSON.stringify(c.data),
          c.unsubscribed ? 1 : 0,
          at,
          at,
        );
        if (this.startsOnContactAdded(c.tenant_id, c.audience_id)) this.recordContactTrigger(c, at);
      }).immediate();
    } catch (error) {
      throw (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? contactExists(c.email) : error;
    }
    return contact;
  }

  /** Whether an enabled automation of the audience starts on `contact_added`. */
  private startsOnContactAdded(tenantId: string, audienceId: string): boolean {
    return (
      this.sql(
        "SELECT 1 FROM automations WHERE tenant_id = ? AND trigger_type = 'contact_added' AND trigger_key = ? AND enabled = 1 LIMIT 1",
      ).get(tenantId, audienceId) !== undefined
    );
  }

  private recordContactTrigger(c: Pick<Contact, 'id' | 'tenant_id' | 'audience_id' | 'email'>, at: string): void {
    this.sql(
      'INSERT INTO contact_triggers (contact_id, tenant_id, audience_id, email, added_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ).run(c.id, c.tenant_id, c.audience_id, c.email, at);
  }

  async upsertContacts(tenantId: string, audienceId: string, rows: ContactUpsert[]): Promise<ContactsUpserted> {
    const at = now();
    const exists = this.sql('SELECT 1 FROM contacts WHERE audience_id = ? AND email = ?');
    const upsert = this.sql(
      `INSERT INTO contacts (${CONTACT_COLUMNS}) VALUES (@id, @tenant_id, @audience_id, @email, @name, @data, @unsubscribed, @at, @at)
         ON CONFLICT (audience_id, email) DO UPDATE SET
           name = CASE WHEN @has_name THEN excluded.name ELSE name END,
           unsubscribed = CASE WHEN @has_unsubscribed THEN excluded.unsubscribed ELSE unsubscribed END,
           data = json_patch(data, excluded.data),
           updated_at = excluded.updated_at`,
    );
    return this.db.transaction(() => {
      const added: string[] = [];
      const triggers = this.startsOnContactAdded(tenantId, audienceId);
      for (const r of rows) {
        const isNew = !exists.get(audienceId, r.email);
        upsert.run({
          id: r.id,
          tenant_id: tenantId,
          audience_id: audienceId,
          email: r.email,
          name: r.name ?? null,
          data: JSON.stringify(r.data),
          unsubscribed: r.unsubscribed ? 1 : 0,
          has_name: r.name === undefined ? 0 : 1,
          has_unsubscribed: r.unsubscribed === undefined ? 0 : 1,
          at,
        });
        if (!isNew) continue;
        added.push(r.id);
        if (triggers) this.recordContactTrigger({ id: r.id, tenant_id: tenantId, audience_id: audienceId, email: r.email }, at);
      }
      return { added: added.length, updated: rows.length - added.length, added_ids: added };
    }).immediate();
  }

  async pendingContactTriggers(before: string, limit: number): Promise<ContactTrigger[]> {
    return this.sql(
      'SELECT contact_id, tenant_id, audience_id, email FROM contact_triggers WHERE added_at < ? ORDER BY added_at, contact_id LIMIT ?',
    ).all(before, limit) as ContactTrigger[];
  }

  async ackContactTriggers(contactIds: readonly string[]): Promise<void> {
    if (contactIds.length === 0) return;
    this.sql(`DELETE FROM contact_triggers WHERE contact_id IN (SELECT value FROM json_each(?))`).run(JSON.stringify(contactIds));
  }

  async getContact(tenantId: string, audienceId: string, idOrEmail: string): Promise<Contact | null> {
    const row = this.sql(
      `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE tenant_id = ? AND audience_id = ? AND ${isContactId(idOrEmail) ? 'id' : 'email'} = ?`,
    ).get(tenantId, audienceId, isContactId(idOrEmail) ? idOrEmail : normalizeAddress(idOrEmail)) as ContactRow | undefined;
    return row ? contactOf(row) : null;
  }

  async updateContact(tenantId: string, audienceId: string, id: string, patch: ContactPatch): Promise<Contact | null> {
    const current = await this.getContact(tenantId, audienceId, id);
    if (!current) return null;
    const next = patchedContact(current, patch, now());
    try {
      this.sql('UPDATE contacts SET email = ?, name = ?, data = ?, unsubscribed = ?, updated_at = ? WHERE id = ?').run(
        next.email,
        next.name,
        JSON.stringify(next.data),
        next.unsubscribed ? 1 : 0,
        next.updated_at,
        id,
      );
    } catch (error) {
      throw (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? contactExists(next.email) : error;
    }
    return next;
  }

  async deleteContact(tenantId: string, audienceId: string, id: string): Promise<boolean> {
    return (
      this.sql('DELETE FROM contacts WHERE tenant_id = ? AND audience_id = ? AND id = ?').run(tenantId, audienceId, id).changes >
      0
    );
  }

  async listContacts(tenantId: string, audienceId: string, opts: { limit: number; cursor?: string }): Promise<Page<Contact>> {
    const after = decodeCursor(opts.cursor, 1)?.[0] ?? '';
    const rows = this.sql(
      `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE audience_id = ? AND tenant_id = ? AND id > ? ORDER BY id LIMIT ?`,
    ).all(audienceId, tenantId, after, opts.limit + 1) as ContactRow[];
    return pageOf(rows, opts.limit, (last) => [last.id], contactOf);
  }

  async createAutomation(a: AutomationCreate): Promise<Automation> {
    const at = now();
    const automation: Automation = { ...a, enabled: true, created_at: at, updated_at: at };
    this.sql(`INSERT INTO automations (${AUTOMATION_COLUMNS}) VALUES (${AUTOMATION_COLUMNS.replace(/\w+/g, '?')})`).run(
      ...automationValues(automation).map(sqliteValue),
    );
    this.enabledAutomations.delete(a.tenant_id);
    return automation;
  }

  async getAutomation(tenantId: string, id: string): Promise<Automation | null> {
    const row = this.sql(`SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = ? AND id = ?`).get(tenantId, id);
    return row ? automationOf(row as AutomationRow) : null;
  }

  async listAutomations(tenantId: string): Promise<Automation[]> {
    const rows = this.sql(`SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = ? ORDER BY created_at, id`).all(
      tenantId,
    );
    return (rows as AutomationRow[]).map(automationOf);
  }

  async automationsTriggeredBy(tenantId: string, type: AutomationTrigger['type'], key: string): Promise<Automation[]> {
    let enabled = this.enabledAutomations.get(tenantId);
    if (!enabled) {
      const rows = this.sql(
        `SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE tenant_id = ? AND enabled = 1 ORDER BY created_at, id`,
      ).all(tenantId);
      enabled = (rows as AutomationRow[]).map(automationOf);
      this.enabledAutomations.set(tenantId, enabled);
    }
    return triggeredBy(enabled, type, key);
  }

  async updateAutomation(tenantId: string, id: string, patch: AutomationPatch): Promise<Automation | null> {
    const current = await this.getAutomation(tenantId, id);
    if (!current) return null;
    const next = patchedAutomation(current, patch, now());
    this.sql('UPDATE automations SET name = ?, enabled = ?, updated_at = ? WHERE id = ?').run(
      next.name,
      next.enabled ? 1 : 0,
      next.updated_at,
      id,
    );
    this.enabledAutomations.delete(tenantId);
    return next;
  }

  async deleteAutomation(tenantId: string, id: string): Promise<boolean> {
    this.enabledAutomations.delete(tenantId);
    // Its runs' rows go with it (ON DELETE CASCADE).
    return this.sql('DELETE FROM automations WHERE tenant_id = ? AND id = ?').run(tenantId, id).changes > 0;
  }

  async putAutomationRun(r: AutomationRun): Promise<void> {
    this.sql(
      `INSERT INTO automation_runs (${RUN_COLUMNS})
       SELECT ${RUN_COLUMNS.replace(/\w+/g, '?')} WHERE EXISTS (SELECT 1 FROM automations WHERE id = ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, reason = excluded.reason, updated_at = excluded.updated_at
         WHERE automation_runs.updated_at <= excluded.updated_at`,
    ).run(...runValues(r), r.automation_id);
  }

  async listAutomationRuns(
    tenantId: string,
    automationId: string,
    opts: { limit: number; cursor?: string },
  ): Promise<Page<AutomationRun>> {
    const [startedAt, id] = decodeCursor(opts.cursor, 2) ?? ['\uffff', ''];
    const rows = this.sql(
      `SELECT ${RUN_COLUMNS} FROM automation_runs WHERE automation_id = ? AND tenant_id = ?
         AND (started_at < ? OR (started_at = ? AND id < ?))
       ORDER BY started_at DESC, id DESC LIMIT ?`,
    ).all(automationId, tenantId, startedAt, startedAt, id || '\uffff', opts.limit + 1) as AutomationRun[];
    return pageOf(rows, opts.limit, (last) => [last.started_at, last.id]);
  }

  async createBroadcast(b: BroadcastCreate): Promise<Broadcast> {
    const broadcast = draftBroadcast(b, now());
    this.sql(`INSERT INTO broadcasts (${BROADCAST_INSERT_COLUMNS}) VALUES (${Array(15).fill('?').join(', ')})`).run(
      ...broadcastValues(broadcast, b.sandbox ? 1 : 0),
    );
    return broadcast;
  }

  async getBroadcast(tenantId: string, id: string): Promise<Broadcast | null> {
    const row = this.sql(`SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE tenant_id = ? AND id = ?`).get(tenantId, id);
    return row ? broadcastOf(row as BroadcastRow) : null;
  }

  async listBroadcasts(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<Broadcast>> {
    const cursor = decodeCursor(opts.cursor, 2);
    const rows = (
      cursor
        ? this.sql(
            `SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE tenant_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?`,
          ).all(tenantId, cursor[0], cursor[1], opts.limit + 1)
        : this.sql(
            `SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
          ).all(tenantId, opts.limit + 1)
    ) as BroadcastRow[];
    return broadcastPage(rows, opts.limit);
  }

  /** Durable once it resolves, through the writer: the event loop never waits on the file's lock for it. */
  setBroadcastState(tenantId: string, id: string, s: BroadcastState): Promise<void> {
    return this.written(broadcastStateWrites(tenantId, id, s, now()));
  }

  async deleteBroadcast(tenantId: string, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const deleted = this.sql('DELETE FROM broadcasts WHERE tenant_id = ? AND id = ?').run(tenantId, id).changes > 0;
      if (deleted) {
        this.sql('DELETE FROM broadcast_events WHERE broadcast_id = ?').run(id);
        this.sql('DELETE FROM broadcast_counts WHERE broadcast_id = ?').run(id);
      }
      return deleted;
    }).immediate();
  }

  /** Durable once it resolves; counted through the writer, as captures are: once per message under load. */
  countBroadcastEvent(e: { broadcast_id: string; kind: BroadcastEventKind; message_id: string }): Promise<void> {
    return this.written(broadcastEventWrites(e));
  }

  async broadcastCounts(broadcastId: string): Promise<Record<BroadcastEventKind, number>> {
    const rows = this.sql('SELECT kind, n FROM broadcast_counts WHERE broadcast_id = ?').all(broadcastId);
    return countsOf(rows as { kind: string; n: number }[]);
  }

  async createInboundRoute(r: InboundRouteCreate): Promise<InboundRoute> {
    const route = newRoute(r, now());
    try {
      this.sql(`INSERT INTO inbound_routes (${ROUTE_COLUMNS}) VALUES (${ROUTE_COLUMNS.replace(/(\w+)/g, '@$1')})`).run(route);
    } catch (error) {
      throw (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? routeExists(r.match) : error;
    }
    return route;
  }

  async getInboundRoute(tenantId: string, id: string): Promise<InboundRoute | null> {
    const row = this.sql(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE tenant_id = ? AND id = ?`).get(tenantId, id);
    return (row as InboundRoute | undefined) ?? null;
  }

  async listInboundRoutes(tenantId: string): Promise<InboundRoute[]> {
    return this.sql(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE tenant_id = ? ORDER BY created_at, id`).all(
      tenantId,
    ) as InboundRoute[];
  }

  async inboundRoutesOn(domain: string): Promise<InboundRoute[]> {
    return this.sql(`SELECT ${ROUTE_COLUMNS} FROM inbound_routes WHERE domain = ? ORDER BY created_at, id`).all(
      domain,
    ) as InboundRoute[];
  }

  async updateInboundRoute(tenantId: string, id: string, patch: InboundRoutePatch): Promise<InboundRoute | null> {
    const current = await this.getInboundRoute(tenantId, id);
    if (!current) return null;
    const next = patchedRoute(current, patch, now());
    try {
      this.sql(
        'UPDATE inbound_routes SET match = @match, domain = @domain, action = @action, endpoint_id = @endpoint_id, updated_at = @updated_at WHERE id = @id',
      ).run(next);
    } catch (error) {
      throw (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? routeExists(next.match) : error;
    }
    return next;
  }

  async deleteInboundRoute(tenantId: string, id: string): Promise<boolean> {
    return this.sql('DELETE FROM inbound_routes WHERE tenant_id = ? AND id = ?').run(tenantId, id).changes > 0;
  }

  /** Durable once it resolves, with its attachments; received messages arriving together share one commit. */
  putInboundMessage(m: InboundMessageCreate): Promise<void> {
    return this.written(inboundWrites(m));
  }

  async getInboundMessage(tenantId: string, id: string): Promise<InboundMessage | null> {
    const row = this.sql(`SELECT ${INBOUND_MESSAGE_COLUMNS} FROM inbound_messages WHERE tenant_id = ? AND id = ?`).get(
      tenantId,
      id,
    );
    return row ? inboundMessageOf(row as InboundMessageRow) : null;
  }

  async listInboundMessages(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<InboundMessage>> {
    const cursor = decodeCursor(opts.cursor, 2);
    const rows = (
      cursor
        ? this.sql(
            `SELECT ${INBOUND_MESSAGE_COLUMNS} FROM inbound_messages WHERE tenant_id = ? AND (received_at, id) < (?, ?) ORDER BY received_at DESC, id DESC LIMIT ?`,
          ).all(tenantId, cursor[0], cursor[1], opts.limit + 1)
        : this.sql(
            `SELECT ${INBOUND_MESSAGE_COLUMNS} FROM inbound_messages WHERE tenant_id = ? ORDER BY received_at DESC, id DESC LIMIT ?`,
          ).all(tenantId, opts.limit + 1)
    ) as InboundMessageRow[];
    return pageOf(rows, opts.limit, (last) => [last.received_at, last.id], inboundMessageOf);
  }

  async inboundRaw(tenantId: string, id: string): Promise<Buffer | null> {
    const row = this.sql('SELECT raw FROM inbound_messages WHERE tenant_id = ? AND id = ?').get(tenantId, id) as
      { raw: Buffer } | undefined;
    return row ? row.raw : null;
  }

  async inboundAttachment(tenantId: string, id: string, n: number): Promise<InboundAttachment | null> {
    const row = this.sql(
      `SELECT a.filename, a.content_type, a.size, a.content_id, a.content FROM inbound_attachments a
         JOIN inbound_messages m ON m.id = a.message_id WHERE m.tenant_id = ? AND a.message_id = ? AND a.n = ?`,
    ).get(tenantId, id, n);
    return (row as InboundAttachment | undefined) ?? null;
  }

  async close(): Promise<void> {
    await this.writer?.close();
    this.writer = null;
    this.db.close();
  }
}
