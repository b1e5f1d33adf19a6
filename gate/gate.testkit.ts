// What the gate's tests share: a tenant's live key to send with.
import { keyRecord, type Quota } from '../store/catalog.port.ts';
import type { Sender } from './gate.ts';

/** Tenant `ten_1`'s live key `key_1`, the tenant held to `quota` (none by default). */
export const senderWith = (quota: Quota = { per_second: null, per_day: null }): Sender => ({
  tenant: { id: 'ten_1', name: 't', default_from: 'app@sender.example', quota, queue_weight: 1, created_at: '' },
  key: keyRecord({ id: 'key_1', tenant_id: 'ten_1', kind: 'live', name: null, prefix: 'gp_live_x' }, ''),
});
