-- Each tenant's reputation breaker status as its last transition left it (actors/tenant/breaker.mirror.ts):
-- on Dapr, GET /metrics gauges the breakers from these, the actor state store being no place to list
-- them from. since: ms since epoch, the transition's time; a transition heard late never replaces a newer one.
CREATE TABLE breaker_states (
  tenant_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  since INTEGER NOT NULL
);
