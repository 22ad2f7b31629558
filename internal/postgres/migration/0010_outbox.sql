-- The outbox (SPEC 14): what the service must announce or do about an
-- endpoint (an operational event, a disable), stored in the transaction of
-- the change that makes it happen, and drained into registration, each
-- entry deleted in the transaction that registers its event. id is the
-- event's (a UUIDv7): entries drain in the order they happened.
CREATE TABLE outbox (
  id          uuid PRIMARY KEY,
  kind        text NOT NULL,
  endpoint_id uuid NOT NULL,
  entry       jsonb NOT NULL, -- the webhooks.OutboxEntry
  created     timestamptz NOT NULL
);
