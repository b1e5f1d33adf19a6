-- Each tenant's reputation breaker status as its last transition left it, as in
-- sqlite/migrations/014_breaker_states.sql. since: ms since epoch, the transition's time.
CREATE TABLE breaker_states (
  tenant_id text PRIMARY KEY,
  status text NOT NULL,
  since bigint NOT NULL
);
