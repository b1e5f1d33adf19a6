-- A tenant's weight in the fair queue (mta/fair.queue.ts, docs/deliverability.md#the-fair-queue):
-- its share of each destination's delivery slots beside the other tenants waiting for them.
ALTER TABLE tenants ADD COLUMN queue_weight REAL NOT NULL DEFAULT 1 CHECK (queue_weight > 0);
