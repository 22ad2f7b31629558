-- Ids in their 16 bytes (issue 28): every column that holds an id keeps
-- the UUID's bytes, not its 36 characters of text (see dbID in id.go).
-- The bytes sort as the text does. webhooks_id(x) is dbID's rule: a
-- canonical id's bytes, any other value as it was. The declared types
-- stay TEXT where a table is updated in place: TEXT affinity stores a
-- BLOB as it is.
--
-- deliveries and attempts are rebuilt with the bytes (a copy in key
-- order is faster than updating every key in place, and leaves full
-- pages). deliveries stays a rowid table: clustered on its id (WITHOUT
-- ROWID) it took 30 bytes per event less (no separate index on the id),
-- but appending to it cost 14 % more CPU per delivery with ten endpoints
-- per event (6,112 against 6,963 deliveries/s, 208 against 179 us, the
-- medians of three alternating runs): SQLite appends a row to a rowid
-- table's last page without rebalancing it. The indexes of events are
-- dropped first and built again after: building one from the finished
-- table is a sort, updating it row by row a delete and an insert per row.
DROP INDEX events_company;
DROP INDEX events_account;
DROP INDEX events_company_type;
DROP INDEX events_account_type;

UPDATE accounts SET id = webhooks_id(id), provisioned_by = webhooks_id(provisioned_by);
UPDATE api_keys SET id = webhooks_id(id), account_id = webhooks_id(account_id);
UPDATE companies SET id = webhooks_id(id), account_id = webhooks_id(account_id);
UPDATE endpoints SET id = webhooks_id(id), company_id = webhooks_id(company_id), account_id = webhooks_id(account_id);
UPDATE events SET id = webhooks_id(id), company_id = webhooks_id(company_id), account_id = webhooks_id(account_id);
UPDATE idempotency_keys SET event_id = webhooks_id(event_id);
UPDATE audit_log SET id = webhooks_id(id), account_id = webhooks_id(account_id), actor_id = webhooks_id(actor_id),
  target_id = webhooks_id(target_id);
UPDATE outbox SET id = webhooks_id(id), endpoint_id = webhooks_id(endpoint_id);
UPDATE erasures SET id = webhooks_id(id), company_id = webhooks_id(company_id), account_id = webhooks_id(account_id),
  after_id = webhooks_id(after_id);
UPDATE relay_sessions SET endpoint_id = webhooks_id(endpoint_id);
UPDATE relay_requests SET id = webhooks_id(id), endpoint_id = webhooks_id(endpoint_id), delivery_id = webhooks_id(delivery_id);
UPDATE bodies SET event_id = webhooks_id(event_id);

CREATE INDEX events_company ON events (company_id, created, id) WHERE test = 0;
CREATE INDEX events_account ON events (account_id, created, id) WHERE test = 0 AND operational = 0;
CREATE INDEX events_company_type ON events (company_id, type, created, id) WHERE test = 0;
CREATE INDEX events_account_type ON events (account_id, type, created, id) WHERE test = 0 AND operational = 0;

CREATE TABLE deliveries_new (
  id                   BLOB PRIMARY KEY,
  endpoint_id          BLOB NOT NULL REFERENCES endpoints (id),
  event_id             BLOB NOT NULL REFERENCES events (id),
  event_type           TEXT NOT NULL,
  relationship         TEXT,
  replay_of            BLOB REFERENCES deliveries (id),
  status               TEXT NOT NULL,
  reason               TEXT,
  attempt_count        INTEGER NOT NULL,
  next_attempt_at      INTEGER,
  last_response_status INTEGER,
  manual               INTEGER NOT NULL,
  parked               INTEGER NOT NULL DEFAULT 0,
  body_n               INTEGER,
  lease_token          BLOB,
  lease_expires        INTEGER,
  created              INTEGER NOT NULL,
  updated              INTEGER NOT NULL,
  schedule_factor      INTEGER NOT NULL DEFAULT 1,
  rehearsal            INTEGER NOT NULL DEFAULT 0,
  ordering_key         TEXT,
  waiting_for          BLOB,
  due_since            INTEGER
);
INSERT INTO deliveries_new (id, endpoint_id, event_id, event_type, relationship, replay_of, status, reason, attempt_count,
    next_attempt_at, last_response_status, manual, parked, body_n, lease_token, lease_expires, created, updated,
    schedule_factor, rehearsal, ordering_key, waiting_for, due_since)
  SELECT webhooks_id(id), webhooks_id(endpoint_id), webhooks_id(event_id), event_type, relationship, webhooks_id(replay_of), status,
    reason, attempt_count, next_attempt_at, last_response_status, manual, parked, body_n, webhooks_id(lease_token), lease_expires,
    created, updated, schedule_factor, rehearsal, ordering_key, webhooks_id(waiting_for), due_since
  FROM deliveries ORDER BY webhooks_id(id);
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
CREATE UNIQUE INDEX deliveries_event ON deliveries (event_id, endpoint_id, (CASE WHEN replay_of IS NULL THEN 1 END));
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, id, status);
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

CREATE TABLE attempts_new (
  delivery_id     BLOB NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number          INTEGER NOT NULL,
  started_at      INTEGER NOT NULL,
  duration_ms     INTEGER NOT NULL,
  response_status INTEGER,
  response_body   BLOB NOT NULL,
  error           TEXT,
  manual          INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, number)
) WITHOUT ROWID;
INSERT INTO attempts_new
  SELECT webhooks_id(delivery_id), number, started_at, duration_ms, response_status, response_body, error, manual
  FROM attempts ORDER BY webhooks_id(delivery_id), number;
DROP TABLE attempts;
ALTER TABLE attempts_new RENAME TO attempts;
