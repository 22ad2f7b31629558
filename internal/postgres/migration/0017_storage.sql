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
CREATE TABLE bodies (
  event_id uuid NOT NULL,
  n        smallint NOT NULL,
  body     bytea NOT NULL,
  PRIMARY KEY (event_id, n)
);
INSERT INTO bodies (event_id, n, body)
  SELECT event_id, row_number() OVER (PARTITION BY event_id ORDER BY min(created), min(id::text)), body
  FROM deliveries WHERE length(body) > 0 GROUP BY event_id, body;

ALTER TABLE deliveries ADD COLUMN body_n smallint;
UPDATE deliveries d SET body_n = b.n FROM bodies b WHERE b.event_id = d.event_id AND b.body = d.body;
ALTER TABLE deliveries DROP COLUMN body;

-- An event's deliveries, by endpoint: the history's event_id filter,
-- ListEventDeliveries, recover's "no newer delivery of the event" and the
-- erasure. It also holds "at most one original delivery per endpoint and
-- event" (deliveries_original before): the third column is true for an
-- original and NULL for a replay, and NULLs are distinct.
DROP INDEX deliveries_original;
DROP INDEX deliveries_event;
CREATE UNIQUE INDEX deliveries_event ON deliveries (event_id, endpoint_id, (CASE WHEN replay_of IS NULL THEN true END));
-- An endpoint's deliveries newest first, with their state: the history
-- and the counts by state.
DROP INDEX deliveries_endpoint;
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, id, status);
-- By state for the rare ones: a delivered delivery, the bulk of the table,
-- is not in it (the history filtered on delivered walks the endpoint's
-- index, where nearly every row matches). A query that uses it says
-- "status <> 'delivered'" in words: a generic plan cannot infer it from
-- "status = $1".
DROP INDEX deliveries_endpoint_status;
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created, id) WHERE status <> 'delivered';

-- The dropped body's bytes leave the table's pages: the rewrite copies
-- every row without them (in id order, the order they were created).
CLUSTER deliveries USING deliveries_pkey;
