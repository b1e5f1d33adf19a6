-- A tenant's weight in the fair queue, as in sqlite/migrations/007_queue_weight.sql.
ALTER TABLE tenants ADD COLUMN queue_weight double precision NOT NULL DEFAULT 1 CHECK (queue_weight > 0);
