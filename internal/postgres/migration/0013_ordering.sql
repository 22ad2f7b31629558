-- Ordered delivery per key (SPEC 18) and the endpoints' options of SPEC 14
-- (automatic recovery).
--
-- An ordered endpoint's delivery of an event with an ordering key is one of
-- a chain: ordering_key names it, and waiting_for the delivery of the chain
-- it waits behind, until that one ends. Its queue row is waiting meanwhile:
-- out of the due index until the delivery it waits behind ends and
-- releases it.
ALTER TABLE events ADD COLUMN ordering_key text;
ALTER TABLE endpoints ADD COLUMN ordered boolean NOT NULL DEFAULT false, ADD COLUMN auto_recover boolean NOT NULL DEFAULT false;
ALTER TABLE deliveries ADD COLUMN ordering_key text, ADD COLUMN waiting_for uuid;
ALTER TABLE queue ADD COLUMN waiting boolean NOT NULL DEFAULT false;

DROP INDEX queue_due;
CREATE INDEX queue_due ON queue (due, delivery_id) WHERE due IS NOT NULL AND NOT parked AND NOT waiting;
-- A chain's pending deliveries (its tail is the one nothing waits behind),
-- and what waits behind each: few rows, the ordered endpoints' alone.
CREATE INDEX deliveries_chain ON deliveries (endpoint_id, ordering_key, created, id)
  WHERE ordering_key IS NOT NULL AND status = 'pending';
CREATE INDEX deliveries_waiting ON deliveries (waiting_for) WHERE waiting_for IS NOT NULL;

-- The routing caches hold endpoints whole, the new options too.
DROP TRIGGER endpoints_routing_update ON endpoints;
CREATE TRIGGER endpoints_routing_update AFTER UPDATE OF scope, company_id, account_id, url, enabled_events, relationships,
    api_version, livemode, description, status, secret, previous_secret, previous_secret_expires, deleted,
    standard_webhooks, rate_limit, disabled_at, disabled_reason, ordered, auto_recover ON endpoints
  FOR EACH STATEMENT EXECUTE FUNCTION routing_version_bump();
