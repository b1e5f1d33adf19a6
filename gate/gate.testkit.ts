// What the gate's tests share: a tenant's live key to send with, and a catalog beside the
// embedded runtime's test harness.
import { join } from 'node:path';
import type { Harness } from '../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { keyRecord, type Quota } from '../store/catalog.port.ts';
import type { Sender } from './gate.ts';

/** Tenant `ten_1`'s live key `key_1`, the tenant held to `quota` (none by default). */
export const senderWith = (quota: Quota = { per_second: null, per_day: null }): Sender => ({
  tenant: { id: 'ten_1', name: 't', default_from: 'app@sender.example', quota, queue_weight: 1, created_at: '' },
  key: keyRecord({ id: 'key_1', tenant_id: 'ten_1', kind: 'live', name: null, prefix: 'gp_live_x' }, ''),
});

/** A catalog in the harness's folder. */
export const catalogBeside = (h: Harness): SqliteCatalog => new SqliteCatalog(join(h.file, '..', 'catalog.sqlite'));
