// Each tenant's rows of a table that every lifecycle event asks for (its enabled webhook endpoints,
// its automations), kept in memory per process and forgotten when PostgreSQL says they changed:
// the tables' triggers notify 'gatepost_catalog' with "<table> <tenant_id>" at each commit that
// touches them (migrations/016_change_notifications.sql), whichever process or person made it.
//
// A change is seen here once its notification arrives, normally within a millisecond of its
// commit: well before a send made after the change reaches its event's fan-out, which takes a
// turn on the message's actor and a publication first. While the listening connection is down,
// nothing is cached and every look-up asks the database.
import pg from 'pg';
import { LRUCache } from 'lru-cache';

const CHANNEL = 'gatepost_catalog';
/** Tenants whose rows one table keeps, the least recently asked for dropped first. */
const MAX_CACHED_TENANTS = 10_000;
/** How long to wait before listening again after the connection was lost. */
const RECONNECT_MS = 1_000;

export type CachedTable = 'webhooks' | 'automations';

export class CatalogChanges {
  private readonly cached = new Map<CachedTable, LRUCache<string, object>>();
  private client: pg.Client | null = null;
  /** Whether every change since the caches were last cleared has been heard. */
  private listening = false;
  /** Grows at every change heard: a look-up that began before one does not keep what it read. */
  private heard = 0;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly onError: (error: Error) => void = () => {},
  ) {}

  /** Listens; answers once it does (or once the first attempt failed: it keeps trying). */
  async start(): Promise<void> {
    const client = new pg.Client(this.connection);
    this.client = client;
    client.on('notification', (n) => {
      const [table, tenantId] = (n.payload ?? '').split(' ');
      this.forget(table as CachedTable, tenantId ?? '');
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.client !== client) return;
    // Changes made while nobody listened were not heard: nothing read before now is kept.
    this.clear();
    this.listening = true;
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.listening = false;
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
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
