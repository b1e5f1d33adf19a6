-- Every process keeps each tenant's enabled webhook endpoints and automations in memory (asked
-- for on every lifecycle event) and forgets a tenant's when told its rows changed: a change made
-- by any process, or by hand, notifies 'gatepost_catalog' with "<table> <tenant_id>" at commit
-- (store/postgres/changes.pg.ts).
CREATE FUNCTION gatepost_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('gatepost_catalog', TG_TABLE_NAME || ' ' || OLD.tenant_id);
  ELSE
    PERFORM pg_notify('gatepost_catalog', TG_TABLE_NAME || ' ' || NEW.tenant_id);
    IF TG_OP = 'UPDATE' AND OLD.tenant_id <> NEW.tenant_id THEN
      PERFORM pg_notify('gatepost_catalog', TG_TABLE_NAME || ' ' || OLD.tenant_id);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER webhooks_changed AFTER INSERT OR UPDATE OR DELETE ON webhooks
  FOR EACH ROW EXECUTE FUNCTION gatepost_catalog_changed();
CREATE TRIGGER automations_changed AFTER INSERT OR UPDATE OR DELETE ON automations
  FOR EACH ROW EXECUTE FUNCTION gatepost_catalog_changed();

-- Every process also keeps which addresses may be suppressed (store/postgres/changes.pg.ts): a
-- suppression written notifies "suppressions <tenant_id> <address>" at commit. One taken off
-- needs no word: an address kept that is no longer suppressed costs only a look-up.
CREATE FUNCTION gatepost_suppression_listed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('gatepost_catalog', 'suppressions ' || NEW.tenant_id || ' ' || NEW.address);
  RETURN NULL;
END
$$;

CREATE TRIGGER suppressions_listed AFTER INSERT OR UPDATE ON suppressions
  FOR EACH ROW EXECUTE FUNCTION gatepost_suppression_listed();
