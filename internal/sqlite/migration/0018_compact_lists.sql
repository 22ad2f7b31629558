-- The history's indexes hold fewer bytes per delivery (issue 28).
--
-- 1. The big lists break ties in created by rowid, not by id. Every entry
-- of an index of a rowid table ends with the row's rowid, and SQLite
-- orders by it as by a last column. Ordered by (created, id), the indexes
-- of deliveries and events each held the id's 16 bytes beside it: 48
-- bytes per event in the endpoint's history with three deliveries, and
-- 64 in the four list indexes of events. Ordered by (created, rowid), the
-- index gives the order without them. The rowid is the order in which
-- rows were inserted (a new row takes the largest plus one), which within
-- a millisecond is as good a "newest first" as the id, and a total order
-- as the id is; a page's cursor is still an item's id, whose created and
-- rowid the next page looks up. VACUUM keeps rowids, and a table rebuilt
-- by a migration must copy them (or insert in their order). PostgreSQL
-- keeps (created, id): its index entries point at rows by a position that
-- changes when the row does.
--
-- 2. A delivery's state is a letter (dbStatus in status.go): 'p' pending,
-- 'd' delivered, 'f' failed, 'x' failed_permanently. Nearly every row said
-- "delivered": 9 bytes, 1 now.
-- The indexes whose key or condition names the state are dropped before
-- the rows change and built again after (a sort each, not an update per
-- row); no other index of deliveries holds the state.
DROP INDEX events_company;
DROP INDEX events_account;
DROP INDEX events_company_type;
DROP INDEX events_account_type;
CREATE INDEX events_company ON events (company_id, created) WHERE test = 0;
CREATE INDEX events_account ON events (account_id, created) WHERE test = 0 AND operational = 0;
CREATE INDEX events_company_type ON events (company_id, type, created) WHERE test = 0;
CREATE INDEX events_account_type ON events (account_id, type, created) WHERE test = 0 AND operational = 0;

DROP INDEX deliveries_endpoint;
DROP INDEX deliveries_endpoint_status;
DROP INDEX deliveries_due;
DROP INDEX deliveries_parked;
DROP INDEX deliveries_chain;
DROP INDEX deliveries_backlog;
UPDATE deliveries SET status = CASE status
  WHEN 'pending' THEN 'p' WHEN 'delivered' THEN 'd' WHEN 'failed' THEN 'f' WHEN 'failed_permanently' THEN 'x' ELSE status END;
-- An endpoint's deliveries newest first: the history, and the counts of
-- all (from the index alone). It held the state too, for the counts by
-- state; now the status index counts the states but delivered, which are
-- what those leave of all (CountDeliveries). With the state after created,
-- the deliveries of one millisecond came out of it by state, and every
-- page sorted them; and a record, which changes the state, moved the
-- delivery's entry.
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created);
-- By state for the rare ones (see 0016): a query that uses it says
-- "status <> 'd'" in words (qNotDelivered).
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created) WHERE status <> 'd';
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id, endpoint_id)
  WHERE status = 'p' AND parked = 0 AND lease_expires IS NULL AND waiting_for IS NULL;
CREATE INDEX deliveries_parked ON deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'p' AND parked = 1;
CREATE INDEX deliveries_chain ON deliveries (endpoint_id, ordering_key, created, id)
  WHERE ordering_key IS NOT NULL AND status = 'p';
CREATE INDEX deliveries_backlog ON deliveries (endpoint_id, due_since)
  WHERE status = 'p' AND lease_expires IS NULL AND waiting_for IS NULL;
