// Each tenant's rows of a table that every lifecycle event asks for (its enabled webhook endpoints,
// its automations), kept in memory per process and forgotten when PostgreSQL says they changed:
// the tables' triggers notify 'gatepost_catalog' with "<table> <tenant_id>" at each commit that
// touches them (migrations/016_change_notifications.sql), whichever process or person made it.
//
// Which addresses may be suppressed is kept the same way, for admission's look-up of each
// recipient (almost never suppressed): every suppression read when listening begins, each one
// written since added as its notification arrives (or at once, in the process that writes it).
//
// A change is seen here once its notification arrives, normally within a millisecond of its
// commit: well before a send made after the change reaches its event's fan-out, which takes a
// turn on the message's actor and a publication first, and before a send made after a
// suppression's answer comes back to admission. While the listening connection is down, nothing
// is cached, every address may be suppressed, and every look-up asks the database.
import pg from 'pg';
import { LRUCache } from 'lru-cache';
import { PresenceFilter } from '../../lib/presence.filter.ts';

const CHANNEL = 'gatepost_catalog';
/** Tenants whose rows one table keeps, the least recently asked for dropped first. */
const MAX_CACHED_TENANTS = 10_000;
/** How long to wait before listening again after the connection was lost. */
const RECONNECT_MS = 1_000;

export type CachedTable = 'webhooks' | 'automations';

const suppressionKey = (tenantId: string, address: string) => `${tenantId}\0${address}`;

export class CatalogChanges {
  private readonly cached = new Map<CachedTable, LRUCache<string, object>>();
  private client: pg.Client | null = null;
  /** Whether every change since the caches were last cleared has been heard. */
  private listening = false;
  /** Grows at every change heard: a look-up that began before one does not keep what it read. */
  private heard = 0;
  private retry: NodeJS.Timeout | null = null;
  /** Every suppressed (tenant, address) while listening; null otherwise: then any may be. */
  private suppressed: PresenceFilter | null = null;
  /** The filter being filled while listening begins, told of what is heard meanwhile. */
  private filling: PresenceFilter | null = null;
  private closed = false;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly onError: (error: Error) => void = () => {},
  ) {}

  /** Listens; answers once it does (or once the first attempt failed: it keeps trying). */
  async start(): Promise<void> {
    // Named, so that an operator (and a test) can tell it among the pool's connections.
    const client = new pg.Client({ ...this.connection, application_name: 'gatepost catalog changes' });
    this.client = client;
    client.on('notification', (n) => {
      const payload = n.payload ?? '';
      const [table, tenantId = ''] = payload.split(' ', 2);
      if (table === 'suppressions') this.listed(tenantId, payload.slice(table.length + tenantId.length + 2));
      else this.forget(table as CachedTable, tenantId);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    let suppressed: PresenceFilter | null = null;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      // Listening first: a suppression committed after the read below is heard.
      const [{ n }] = (await client.query<{ n: string }>('SELECT count(*) AS n FROM suppressions')).rows as [{ n: string }];
      suppressed = this.filling = new PresenceFilter(Number(n) * 2);
      const all = await client.query<[string, string]>({ text: 'SELECT tenant_id, address FROM suppressions', rowMode: 'array' });
      for (const [tenantId, address] of all.rows) suppressed.add(suppressionKey(tenantId, address));
    } catch (error) {
      this.lost(client, error as Error);
      return;
    } finally {
      // Unless a later start fills its own by now.
      if (this.filling === suppressed) this.filling = null;
    }
    if (this.client !== client || !suppressed) return;
    // Changes made while nobody listened were not heard: nothing read before now is kept.
    this.clear();
    this.suppressed = suppressed;
    this.listening = true;
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.listening = false;
    this.suppressed = null;
    this.clear();
    void client.end().catch(() => {});
    if (this.closed) return;
    if (error) this.onError(error);
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, RECONNECT_MS);
    this.retry.unref();
  }

  private clear(): void {
    this.heard++;
    for (const cache of this.cached.values()) cache.clear();
  }

  /** This process changed `table`'s rows of `tenantId` (its notification comes too, later). */
  forget(table: CachedTable, tenantId: string): void {
    this.heard++;
    this.cached.get(table)?.delete(tenantId);
  }

  /** A suppression of `address` is (about to be) written: before it can be read, so "no" is never wrong here. */
  listed(tenantId: string, address: string): void {
    const key = suppressionKey(tenantId, address);
    this.suppressed?.add(key);
    this.filling?.add(key);
  }

  /** False only when `address` is certainly not suppressed for `tenantId`. */
  maySuppress(tenantId: string, address: string): boolean {
    return this.suppressed?.mayHave(suppressionKey(tenantId, address)) ?? true;
  }

  /** `tenantId`'s rows of `table` as `read` answers them, read once while no change is heard. */
  async rows<T extends object>(table: CachedTable, tenantId: string, read: () => Promise<T>): Promise<T> {
    let cache = this.cached.get(table);
    if (!cache) this.cached.set(table, (cache = new LRUCache({ max: MAX_CACHED_TENANTS })));
    const hit = cache.get(tenantId);
    if (hit) return hit as T;
    const before = this.heard;
    const value = await read();
    if (this.listening && this.heard === before) cache.set(tenantId, value);
    return value;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    this.suppressed = null;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
