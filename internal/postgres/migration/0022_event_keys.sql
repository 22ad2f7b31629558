-- The events' logs indexed by 64-bit hashes of their company, account and
-- type (issue 28), as the endpoint's history is (0020): an entry of the
-- company's or the account's log is two 8-byte columns (was a uuid and a
-- timestamp: 24 bytes), which pages split where a company appends (at
-- many companies their pages stayed about 57 % full), without
-- deduplication, whose entries of unequal width defeat that split; an
-- entry of a log by type three (was the uuid, the type's text and the
-- timestamp: 40 bytes with padding). A query says the hashes' equalities
-- and the columns' own (see hashkey.go).
DROP INDEX events_company;
CREATE INDEX events_company ON events (uuid_hash_extended(company_id, 0), created) WITH (deduplicate_items = off) WHERE NOT test;
DROP INDEX events_account;
CREATE INDEX events_account ON events (uuid_hash_extended(account_id, 0), created) WITH (deduplicate_items = off)
  WHERE NOT test AND NOT operational;
DROP INDEX events_company_type;
CREATE INDEX events_company_type ON events (uuid_hash_extended(company_id, 0), hashtextextended(type, 0), created) WHERE NOT test;
DROP INDEX events_account_type;
CREATE INDEX events_account_type ON events (uuid_hash_extended(account_id, 0), hashtextextended(type, 0), created)
  WHERE NOT test AND NOT operational;

-- The planner takes a hash's equality and its column's own for two
-- independent conditions and multiplies their selectivities: at a few
-- hundred endpoints it expects one row of an endpoint's history, and
-- reads the endpoint's every row to sort them for a page of 20. A
-- dependency statistic tells it that the column determines the hash.
CREATE STATISTICS deliveries_endpoint_key (dependencies) ON endpoint_id, (uuid_hash_extended(endpoint_id, 0)) FROM deliveries;
CREATE STATISTICS events_company_key (dependencies) ON company_id, (uuid_hash_extended(company_id, 0)) FROM events;
CREATE STATISTICS events_account_key (dependencies) ON account_id, (uuid_hash_extended(account_id, 0)) FROM events;
CREATE STATISTICS events_type_key (dependencies) ON type, (hashtextextended(type, 0)) FROM events;
ANALYZE deliveries;
ANALYZE events;
