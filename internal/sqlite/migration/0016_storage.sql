-- Storage footprint (issue 28): fewer bytes per event, the same reads.
--
-- A delivery's rendered body is stored once per event and rendering
-- (bodies), not on every delivery: an event's deliveries to endpoints of
-- one payload version and envelope send the same bytes, and a replay sends
-- its original's. A delivery names its body by its event and body_n;
-- body_n is NULL once the event is erased (its bodies are deleted with
-- it). The bytes each attempt sends are still fixed when the delivery is
-- created (SPEC 4): a body row is never changed, only deleted.
CREATE TABLE bodies (
  event_id TEXT NOT NULL REFERENCES events (id),
  n        INTEGER NOT NULL,
  body     BLOB NOT NULL,
  PRIMARY KEY (event_id, n)
) WITHOUT ROWID;
INSERT INTO bodies (event_id, n, body)
  SELECT event_id, row_number() OVER (PARTITION BY event_id ORDER BY min(rowid)), body
  FROM deliveries WHERE length(body) > 0 GROUP BY event_id, body;

-- The table is rebuilt without its body column (SQLite's DROP COLUMN
-- would rewrite it as well, and the indexes change with it).
CREATE TABLE deliveries_new (
  id                   TEXT PRIMARY KEY,
  endpoint_id          TEXT NOT NULL REFERENCES endpoints (id),
  event_id             TEXT NOT NULL REFERENCES events (id),
  event_type           TEXT NOT NULL,
  relationship         TEXT,
  replay_of            TEXT REFERENCES deliveries (id),
  status               TEXT NOT NULL,
  reason               TEXT,
  attempt_count        INTEGER NOT NULL,
  next_attempt_at      INTEGER,
  last_response_status INTEGER,
  manual               INTEGER NOT NULL,
  parked               INTEGER NOT NULL DEFAULT 0,
  body_n               INTEGER,
  lease_token          TEXT,
  lease_expires        INTEGER,
  created              INTEGER NOT NULL,
  updated              INTEGER NOT NULL,
  schedule_factor      INTEGER NOT NULL DEFAULT 1,
  rehearsal            INTEGER NOT NULL DEFAULT 0,
  ordering_key         TEXT,
  waiting_for          TEXT,
  due_since            INTEGER
);
INSERT INTO deliveries_new (id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
    next_attempt_at, last_response_status, manual, parked, body_n, lease_token, lease_expires, created, updated,
    schedule_factor, rehearsal, ordering_key, waiting_for, due_since)
  SELECT d.id, d.endpoint_id, d.event_id, d.event_type, d.relationship, d.replay_of, d.status, d.reason, d.attempt_count,
    d.next_attempt_at, d.last_response_status, d.manual, d.parked,
    (SELECT b.n FROM bodies b WHERE b.event_id = d.event_id AND b.body = d.body),
    d.lease_token, d.lease_expires, d.created, d.updated, d.schedule_factor, d.rehearsal, d.ordering_key, d.waiting_for, d.due_since
  FROM deliveries d ORDER BY d.rowid;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;

-- An event's deliveries, by endpoint: the history's event_id filter,
-- ListEventDeliveries, recover's "no newer delivery of the event" and the
-- erasure. It also holds "at most one original delivery per endpoint and
-- event" (deliveries_original before): the third column is 1 for an
-- original and NULL for a replay, and NULLs are distinct. An event has a
-- handful of deliveries per endpoint: sorting them costs nothing.
CREATE UNIQUE INDEX deliveries_event ON deliveries (event_id, endpoint_id, (CASE WHEN replay_of IS NULL THEN 1 END));
-- An endpoint's deliveries newest first, with their state: the history,
-- the counts by state (from the index alone), recover's window.
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, id, status);
-- By state for the rare ones: a delivered delivery, the bulk of the table,
-- is not in it (the history filtered on delivered walks the endpoint's
-- index, where nearly every row matches). A query that uses it says
-- "status <> 'delivered'" in words (SQLite's rule for partial indexes).
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created, id) WHERE status <> 'delivered';
CREATE INDEX deliveries_replay_of ON deliveries (replay_of) WHERE replay_of IS NOT NULL;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id, endpoint_id)
  WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL AND waiting_for IS NULL;
CREATE INDEX deliveries_parked ON deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending' AND parked = 1;
CREATE INDEX deliveries_leased ON deliveries (lease_expires, endpoint_id) WHERE lease_expires IS NOT NULL;
CREATE INDEX deliveries_chain ON deliveries (endpoint_id, ordering_key, created, id)
  WHERE ordering_key IS NOT NULL AND status = 'pending';
CREATE INDEX deliveries_waiting ON deliveries (waiting_for) WHERE waiting_for IS NOT NULL;
CREATE INDEX deliveries_backlog ON deliveries (endpoint_id, due_since)
  WHERE status = 'pending' AND lease_expires IS NULL AND waiting_for IS NULL;

-- Attempts clustered on their key: the table is its own primary key's
-- index, one b-tree instead of two.
CREATE TABLE attempts_new (
  delivery_id     TEXT NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number          INTEGER NOT NULL,
  started_at      INTEGER NOT NULL,
  duration_ms     INTEGER NOT NULL,
  response_status INTEGER,
  response_body   BLOB NOT NULL,
  error           TEXT,
  manual          INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, number)
) WITHOUT ROWID;
INSERT INTO attempts_new SELECT delivery_id, number, started_at, duration_ms, response_status, response_body, error, manual FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_new RENAME TO attempts;
