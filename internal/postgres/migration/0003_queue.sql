-- The work queue leaves the deliveries table for a narrow table of its own.
--
-- A delivery's row is wide (its body) and has six indexes for the history
-- lists. While it was also the queue, claiming a delivery updated that row,
-- and since the claim changes indexed columns, PostgreSQL wrote a new entry
-- in every index and copied the body: measured, the claim and the record
-- were most of the engine's database time. Now a claim updates a small
-- queue row with small indexes, and the delivery's row is written when it
-- is created and once per attempt recorded.
--
-- A queue row exists while its delivery is pending: it is inserted with the
-- delivery (or when a resend re-arms it) and deleted when an attempt ends
-- the delivery. due is the delivery's next_attempt_at; NULL when the
-- delivery ended (its endpoint was disabled or deleted) during an attempt
-- whose claim must still be able to record. A claim sets lease_token and
-- lease_expires; it lapses when lease_expires passes. A due row whose
-- endpoint holds its cap of claims is parked: out of the due index until
-- the endpoint has a free slot, so that a deep backlog on one endpoint is
-- not read again at every claim.
CREATE TABLE queue (
  delivery_id   uuid PRIMARY KEY REFERENCES deliveries (id) ON DELETE CASCADE,
  endpoint_id   uuid NOT NULL,
  due           timestamptz,
  parked        boolean NOT NULL DEFAULT false,
  lease_token   text,
  lease_expires timestamptz
);
ALTER TABLE queue SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);
-- Due rows in order (delivery_id breaks ties, and is the cursor of a
-- claim's chunks).
CREATE INDEX queue_due ON queue (due, delivery_id) WHERE due IS NOT NULL AND NOT parked;
-- Parked rows per endpoint, in the order they come back.
CREATE INDEX queue_parked ON queue (endpoint_id, due, delivery_id) WHERE parked;
-- Claims held now (and lapsed ones not yet cleared), counted per endpoint for
-- the per-endpoint cap.
CREATE INDEX queue_leased ON queue (endpoint_id, lease_expires) WHERE lease_expires IS NOT NULL;

INSERT INTO queue (delivery_id, endpoint_id, due, parked, lease_token, lease_expires)
  SELECT id, endpoint_id, next_attempt_at, parked, lease_token, lease_expires FROM deliveries WHERE status = 'pending';

DROP INDEX deliveries_due;
DROP INDEX deliveries_parked;
DROP INDEX deliveries_leased;
-- A delivery ended during an attempt kept its claim until the attempt
-- recorded: it keeps it in the queue.
INSERT INTO queue (delivery_id, endpoint_id, due, lease_token, lease_expires)
  SELECT id, endpoint_id, NULL, lease_token, lease_expires FROM deliveries WHERE status <> 'pending' AND lease_token IS NOT NULL;
ALTER TABLE deliveries DROP COLUMN parked, DROP COLUMN lease_token, DROP COLUMN lease_expires;
