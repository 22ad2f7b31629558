-- The big lists break ties in created by rowid, not by id (issue 28).
--
-- Every entry of an index of a rowid table ends with the row's rowid, and
-- SQLite orders by it as by a last column. Ordered by (created, id), the
-- indexes of deliveries and events each held the id's 16 bytes beside it:
-- 48 bytes per event in the endpoint's history with three deliveries, and
-- 64 in the four indexes of events. Ordered by (created, rowid), the
-- index gives the order without them. The rowid is the order in which
-- rows were inserted (a new row takes the largest plus one), which within
-- a millisecond is as good a "newest first" as the id, and it is a total
-- order as the id is; a page's cursor is still an item's id, whose
-- created and rowid the next page looks up. VACUUM keeps rowids, and a
-- table rebuilt by a migration must copy them (or insert in their order).
-- PostgreSQL keeps (created, id): its index entries point at rows by a
-- position that changes when the row does.
DROP INDEX events_company;
DROP INDEX events_account;
DROP INDEX events_company_type;
DROP INDEX events_account_type;
CREATE INDEX events_company ON events (company_id, created) WHERE test = 0;
CREATE INDEX events_account ON events (account_id, created) WHERE test = 0 AND operational = 0;
CREATE INDEX events_company_type ON events (company_id, type, created) WHERE test = 0;
CREATE INDEX events_account_type ON events (account_id, type, created) WHERE test = 0 AND operational = 0;

-- An endpoint's deliveries newest first, with their state: the history,
-- the counts by state (from the index alone), recover's window.
DROP INDEX deliveries_endpoint;
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, status);
-- By state for the rare ones (see 0016).
DROP INDEX deliveries_endpoint_status;
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created) WHERE status <> 'delivered';
