-- An attempt's record is a HOT update (issues 25 and 28).
--
-- A delivery's row is inserted pending and updated once when its attempt
-- records (delivered; or pending again, for a retry). PostgreSQL updates a
-- row in place, on its page and without a new entry in any index (HOT),
-- only if no column an index uses (as a key, in an expression or in a
-- partial index's predicate) changes. Three indexes used the status, which
-- the record changes: every delivery existed as two row versions, with two
-- entries in every index of the table, until a vacuum, and the indexes
-- kept the room of the dead entries. Now no index of deliveries uses the
-- status; what the history reads by state is found elsewhere:
--
--   pending: the queue, which holds a row for every pending delivery (and,
--     not due, for one that ended during an attempt whose claim still
--     records), by endpoint and created;
--   failed, failed_permanently: failed_status, a stored column that is the
--     status of a failed delivery and NULL otherwise, so NULL before and
--     after the common record: its index is not touched by it;
--   delivered: the endpoint's history, where nearly every row matches.
--
-- The indexes that change go first: adding the stored column rewrites the
-- table, which would rebuild them.
DROP INDEX deliveries_endpoint;
DROP INDEX deliveries_endpoint_status;
DROP INDEX deliveries_chain;

ALTER TABLE deliveries ADD COLUMN failed_status text
  GENERATED ALWAYS AS (CASE WHEN status IN ('failed', 'failed_permanently') THEN status END) STORED;

-- An endpoint's deliveries newest first: the history, the delivered ones,
-- and the counts by state (which read the state from the rows).
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, id);
-- The failed ones, by state: the history filtered on one, and what a
-- recovery sends again. A query that uses it says "failed_status = ...",
-- which implies the predicate.
CREATE INDEX deliveries_failed ON deliveries (endpoint_id, failed_status, created, id) WHERE failed_status IS NOT NULL;

-- A queue row carries its delivery's created and ordering key (neither
-- changes while the row lives, but for a re-arm, which rewrites the row):
-- an endpoint's pending deliveries newest first, and a chain's (SPEC 18),
-- whose tail a registration reads, are read from the queue alone, without
-- reading the endpoint's or the chain's history. Only ordered endpoints'
-- deliveries have an ordering key.
ALTER TABLE queue ADD COLUMN created timestamptz, ADD COLUMN ordering_key text;
UPDATE queue q SET created = d.created, ordering_key = d.ordering_key FROM deliveries d WHERE d.id = q.delivery_id;
ALTER TABLE queue ALTER COLUMN created SET NOT NULL;
CREATE INDEX queue_endpoint ON queue (endpoint_id, created, delivery_id);
CREATE INDEX queue_chain ON queue (endpoint_id, ordering_key, created, delivery_id) WHERE ordering_key IS NOT NULL;
