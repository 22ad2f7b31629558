-- The endpoint's history indexed by a 64-bit key of the endpoint (issue 28).
--
-- deliveries_endpoint is (endpoint_id, created): every endpoint appends at
-- its own place in the index, several places at once. A leaf page that
-- fills there is split in half, and the left half is never written again:
-- the index stayed about 57 % full. PostgreSQL splits such a page where
-- the insertions are (leaving it 90 % full, as at the index's right end)
-- only when it sees them as an ascending run within one prefix, which it
-- tests for entries no wider than two 8-byte columns: a uuid and a
-- timestamp are 24 bytes. A 64-bit hash of the endpoint's id and the
-- timestamp are 16, and the pages stay about 90 % full. The test also
-- wants every entry of the page the same width, which the deduplication
-- of equal keys breaks (the deliveries of one registration share their
-- created: 8 % of the keys in a bench run), so the index keeps each
-- duplicate as its own entry. A query that reads the index
-- says both uuid_hash_extended(endpoint_id, 0) = uuid_hash_extended($1, 0)
-- and endpoint_id = $1: two endpoints whose keys collide (one chance in
-- 2^64 for a pair) share the index's range, and the second condition keeps
-- each endpoint's own rows.
DROP INDEX deliveries_endpoint;
CREATE INDEX deliveries_endpoint ON deliveries (uuid_hash_extended(endpoint_id, 0), created)
  WITH (deduplicate_items = off);
