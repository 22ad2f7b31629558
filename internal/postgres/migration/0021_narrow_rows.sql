-- The deliveries' and the attempts' rows without padding (issue 28).
--
-- PostgreSQL lays a row's columns out in the table's order, each at its
-- type's alignment, and rounds the row up to 8 bytes. A delivery's row
-- took 144 bytes, 9 of them padding and 10 the word "delivered"; an
-- attempt's 72. Both tables are rebuilt with the 8-byte columns first,
-- then the 4-, 2- and 1-byte ones, then the texts: a delivered delivery
-- takes 128 bytes (its state one of an enum's four values, 4 bytes, whose
-- SQL still says 'pending'; its last answer's status 2 bytes) and an
-- attempt 64 (its duration in milliseconds 4 bytes: 24 days).
--
-- The rows are copied in the order they are stored (which is, nearly,
-- the order they were created in, the order the history reads them) into
-- full pages, and the room left on each page for an attempt's record
-- (fillfactor 85, since migration 0001) applies to the pages written after.
CREATE TYPE delivery_status AS ENUM ('pending', 'delivered', 'failed', 'failed_permanently');

ALTER TABLE queue DROP CONSTRAINT queue_delivery_id_fkey;

CREATE TABLE deliveries_new (
  id                   uuid NOT NULL,
  endpoint_id          uuid NOT NULL,
  event_id             uuid NOT NULL,
  created              timestamptz NOT NULL,
  updated              timestamptz NOT NULL,
  next_attempt_at      timestamptz,
  attempt_count        integer NOT NULL,
  schedule_factor      integer NOT NULL DEFAULT 1,
  status               delivery_status NOT NULL,
  last_response_status smallint,
  body_n               smallint,
  manual               boolean NOT NULL,
  rehearsal            boolean NOT NULL DEFAULT false,
  event_type           text NOT NULL,
  relationship         text,
  reason               text,
  ordering_key         text,
  replay_of            uuid,
  waiting_for          uuid,
  failed_status        delivery_status GENERATED ALWAYS AS (
    CASE WHEN status IN ('failed', 'failed_permanently') THEN status END) STORED
);
INSERT INTO deliveries_new (id, endpoint_id, event_id, created, updated, next_attempt_at, attempt_count, schedule_factor,
    status, last_response_status, body_n, manual, rehearsal, event_type, relationship, reason, ordering_key, replay_of, waiting_for)
  SELECT id, endpoint_id, event_id, created, updated, next_attempt_at, attempt_count, schedule_factor,
    status::delivery_status, last_response_status, body_n, manual, rehearsal, event_type, relationship, reason, ordering_key, replay_of, waiting_for
  FROM deliveries;

CREATE TABLE attempts_new (
  delivery_id     uuid NOT NULL,
  started_at      timestamptz NOT NULL,
  number          integer NOT NULL,
  duration_ms     integer NOT NULL,
  response_status smallint,
  manual          boolean NOT NULL,
  -- bytea: the first KiB of an answer need not be valid UTF-8.
  response_body   bytea NOT NULL,
  error           text
);
INSERT INTO attempts_new (delivery_id, started_at, number, duration_ms, response_status, manual, response_body, error)
  SELECT delivery_id, started_at, number, least(duration_ms, 2147483647), response_status, manual, response_body, error
  FROM attempts;

DROP TABLE attempts;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
ALTER TABLE attempts_new RENAME TO attempts;
ALTER TABLE deliveries SET (fillfactor = 85, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);

ALTER TABLE deliveries ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);
-- As migrations 0001, 0018 and 0020 made them.
CREATE UNIQUE INDEX deliveries_event ON deliveries (event_id, endpoint_id, (CASE WHEN replay_of IS NULL THEN true END));
CREATE INDEX deliveries_endpoint ON deliveries (uuid_hash_extended(endpoint_id, 0), created)
  WITH (deduplicate_items = off);
CREATE INDEX deliveries_failed ON deliveries (endpoint_id, failed_status, created, id) WHERE failed_status IS NOT NULL;
CREATE INDEX deliveries_replay_of ON deliveries (replay_of) WHERE replay_of IS NOT NULL;
CREATE INDEX deliveries_waiting ON deliveries (waiting_for) WHERE waiting_for IS NOT NULL;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events (id);
ALTER TABLE deliveries ADD CONSTRAINT deliveries_replay_of_fkey FOREIGN KEY (replay_of) REFERENCES deliveries (id);

ALTER TABLE attempts ADD CONSTRAINT attempts_pkey PRIMARY KEY (delivery_id, number);
ALTER TABLE attempts ADD CONSTRAINT attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES deliveries (id) ON DELETE CASCADE;
ALTER TABLE queue ADD CONSTRAINT queue_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES deliveries (id) ON DELETE CASCADE;
