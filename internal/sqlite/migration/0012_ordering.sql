-- Ordered delivery per key (SPEC 18) and the endpoints' options of SPEC 14
-- (automatic recovery).
--
-- An ordered endpoint's delivery of an event with an ordering key is one of
-- a chain: ordering_key names it, and waiting_for the delivery of the chain
-- it waits behind, until that one ends. A delivery that waits is not due:
-- it is out of the due index until the delivery it waits behind ends and
-- releases it.
ALTER TABLE events ADD COLUMN ordering_key TEXT;
ALTER TABLE endpoints ADD COLUMN ordered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN auto_recover INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN ordering_key TEXT;
ALTER TABLE deliveries ADD COLUMN waiting_for TEXT;

DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id, endpoint_id)
  WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL AND waiting_for IS NULL;
-- A chain's pending deliveries (its tail is the one nothing waits behind),
-- and what waits behind each: few rows, the ordered endpoints' alone.
CREATE INDEX deliveries_chain ON deliveries (endpoint_id, ordering_key, created, id)
  WHERE ordering_key IS NOT NULL AND status = 'pending';
CREATE INDEX deliveries_waiting ON deliveries (waiting_for) WHERE waiting_for IS NOT NULL;

-- The routing cache holds endpoints whole, the new options too.
DROP TRIGGER endpoints_routing_update;
CREATE TRIGGER endpoints_routing_update AFTER UPDATE OF scope, company_id, account_id, url, enabled_events, relationships,
    api_version, livemode, description, status, secret, previous_secret, previous_secret_expires, deleted,
    standard_webhooks, rate_limit, ordered, auto_recover ON endpoints
  BEGIN UPDATE routing_version SET version = version + 1; END;
