// The catalog: tenants, API keys, templates, and the queryable indexes that actors feed
// (suppression list, sandbox capture inbox). One interface; SQLite (embedded) and PostgreSQL
// (cluster) implement it. Methods are async so both can.

export type KeyKind = 'live' | 'sandbox' | 'public';

export interface Quota {
  /** Sends per second; null: no limit. */
  per_second: number | null;
  /** Sends per UTC day; null: no limit. */
  per_day: number | null;
}

export interface Tenant {
  id: string;
  name: string;
  default_from: string | null;
  quota: Quota;
  created_at: string;
}

export interface ApiKey {
  id: string;
  tenant_id: string;
  kind: KeyKind;
  name: string | null;
  /** The first characters of the key, enough to recognise it; the key itself is never stored. */
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export interface Template {
  id: string;
  tenant_id: string;
  slug: string;
  name: string | null;
  subject: string;
  html: string;
  text: string | null;
  from: string | null;
  to: string | null;
  reply_to: string | null;
  created_at: string;
  updated_at: string;
}

export type TemplateFields = Pick<Template, 'slug' | 'name' | 'subject' | 'html' | 'text' | 'from' | 'to' | 'reply_to'>;

export type SuppressionReason = 'hard_bounce' | 'complaint' | 'unsubscribe' | 'manual';

export interface Suppression {
  tenant_id: string;
  address: string;
  reason: SuppressionReason;
  detail: string | null;
  created_at: string;
}

export interface CapturedMessage {
  message_id: string;
  tenant_id: string;
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  captured_at: string;
}

export interface Page<T> {
  data: T[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  next_cursor: string | null;
}

export interface Catalog {
  createTenant(t: { id: string; name: string; default_from: string | null; quota: Quota }): Promise<Tenant>;
  getTenant(id: string): Promise<Tenant | null>;
  listTenants(): Promise<Tenant[]>;
  updateTenant(id: string, patch: Partial<Pick<Tenant, 'name' | 'default_from' | 'quota'>>): Promise<Tenant | null>;

  createKey(k: Omit<ApiKey, 'created_at' | 'revoked_at'>, hash: string): Promise<ApiKey>;
  /** The live (unrevoked) key with this hash. */
  findKeyByHash(hash: string): Promise<ApiKey | null>;
  listKeys(tenantId: string): Promise<ApiKey[]>;
  revokeKey(tenantId: string, keyId: string): Promise<ApiKey | null>;

  createTemplate(tenantId: string, id: string, fields: TemplateFields): Promise<Template>;
  getTemplate(tenantId: string, slug: string): Promise<Template | null>;
  listTemplates(tenantId: string): Promise<Template[]>;
  updateTemplate(tenantId: string, slug: string, fields: Partial<TemplateFields>): Promise<Template | null>;
  deleteTemplate(tenantId: string, slug: string): Promise<boolean>;

  putSuppression(s: Suppression): Promise<void>;
  deleteSuppression(tenantId: string, address: string): Promise<void>;
  /** The entry for this (normalized) address, as the list has it; it follows the RecipientActors a moment late. */
  getSuppression(tenantId: string, address: string): Promise<Suppression | null>;
  listSuppressions(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<Suppression>>;

  putCapture(c: CapturedMessage): Promise<void>;
  listCaptures(tenantId: string, opts: { limit: number; cursor?: string }): Promise<Page<CapturedMessage>>;
  getCapture(tenantId: string, messageId: string): Promise<CapturedMessage | null>;

  close(): Promise<void>;
}
