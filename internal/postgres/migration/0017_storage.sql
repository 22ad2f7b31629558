-- Storage footprint (issue 28): fewer bytes per event, the same reads.
--
-- A delivery's rendered body is stored once per event and rendering
-- (bodies), not on every delivery: an event's deliveries to endpoints of
-- one payload version and envelope send the same bytes, and a replay sends
-- its original's. A delivery names its body by its event and body_n;
-- body_n is NULL once the event is erased (its bodies are deleted with
-- it). The bytes each attempt sends are still fixed when the delivery is
-- created (SPEC 4): a body row is never changed, only deleted. No foreign
-- key to events, as for the deliveries' (0002): the purge deletes both.
-- The indexes that change go first: the rewrite below would rebuild them.
DROP INDEX deliveries_original;
DROP INDEX deliveries_event;
DROP INDEX deliveries_endpoint;
DROP INDEX deliveries_endpoint_status;

CREATE TABLE bodies (
  event_id uuid NOT NULL,
  n        smallint NOT NULL,
  body     bytea NOT NULL,
  PRIMARY KEY (event_id, n)
);
INSERT INTO bodies (event_id, n, body)
  SELECT event_id, row_number() OVER (PARTITION BY event_id ORDER BY min(created), min(id::text)), body
  FROM deliveries WHERE length(body) > 0 GROUP BY event_id, body;

-- The body column becomes its number in one rewrite of the table, which
-- also leaves out the bytes of the columns dropped earlier (0003): an
-- UPDATE and a CLUSTER would write every row twice. NULL for an erased
-- delivery's empty body.
CREATE FUNCTION storage_body_n(e uuid, b bytea) RETURNS smallint LANGUAGE sql STABLE
  AS $$ SELECT n FROM bodies WHERE event_id = e AND body = b $$;
ALTER TABLE deliveries ALTER COLUMN body DROP NOT NULL;
ALTER TABLE deliveries ALTER COLUMN body TYPE smallint USING storage_body_n(event_id, body);
ALTER TABLE deliveries RENAME COLUMN body TO body_n;
DROP FUNCTION storage_body_n(uuid, bytea);

-- An event's deliveries, by endpoint: the history's event_id filter,
-- ListEventDeliveries, recover's "no newer delivery of the event" and the
-- erasure. It also holds "at most one original delivery per endpoint and
-- event" (deliveries_original before): the third column is true for an
-- original and NULL for a replay, and NULLs are distinct.
CREATE UNIQUE INDEX deliveries_event ON deliveries (event_id, endpoint_id, (CASE WHEN replay_of IS NULL THEN true END));
-- An endpoint's deliveries newest first, with their state: the history
-- and the counts by state.
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, id, status);
-- By state for the rare ones: a delivered delivery, the bulk of the table,
-- is not in it (the history filtered on delivered walks the endpoint's
-- index, where nearly every row matches). A query that uses it says
-- "status <> 'delivered'" in words: a generic plan cannot infer it from
-- "status = $1".
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created, id) WHERE status <> 'delivered';
