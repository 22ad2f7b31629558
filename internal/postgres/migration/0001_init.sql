-- Ids are the domain's canonical UUID strings, stored as uuid (16 bytes, and
-- byte order is the canonical string's order, so (created, id) sorts as in
-- SQLite). Times are timestamptz, written to the millisecond.

CREATE TABLE accounts (
  id             uuid PRIMARY KEY,
  name           text NOT NULL,
  provisioned_by uuid REFERENCES accounts (id),
  created        timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id         uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  hash       bytea NOT NULL UNIQUE,
  created    timestamptz NOT NULL
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE companies (
  id         uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  -- The store maps a violation of this constraint, by name, to nif_taken.
  nif        text NOT NULL CONSTRAINT companies_nif_key UNIQUE,
  name       text NOT NULL,
  created    timestamptz NOT NULL
);
CREATE INDEX companies_account ON companies (account_id, created, id);

-- An endpoint belongs to a company (company_id) or an account (account_id).
-- Deleted endpoints stay, with deleted set, so that their deliveries keep
-- their history until retention purges it.
CREATE TABLE endpoints (
  id                      uuid PRIMARY KEY,
  scope                   text NOT NULL CHECK (scope IN ('company', 'account')),
  company_id              uuid REFERENCES companies (id),
  account_id              uuid REFERENCES accounts (id),
  url                     text NOT NULL,
  enabled_events          text[] NOT NULL,
  relationships           text[] NOT NULL,
  api_version             text NOT NULL,
  livemode                boolean NOT NULL,
  description             text NOT NULL,
  status                  text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  secret                  text NOT NULL,
  previous_secret         text,
  previous_secret_expires timestamptz,
  created                 timestamptz NOT NULL,
  updated                 timestamptz NOT NULL,
  deleted                 timestamptz,
  CHECK ((scope = 'company' AND company_id IS NOT NULL AND account_id IS NULL)
      OR (scope = 'account' AND account_id IS NOT NULL AND company_id IS NULL))
);
CREATE INDEX endpoints_company ON endpoints (company_id, created, id) WHERE deleted IS NULL;
CREATE INDEX endpoints_account ON endpoints (account_id, created, id) WHERE deleted IS NULL;

CREATE TABLE events (
  id             uuid PRIMARY KEY,
  type           text NOT NULL,
  api_version    text NOT NULL,
  livemode       boolean NOT NULL,
  test           boolean NOT NULL,
  correlation_id text,
  account_id     uuid NOT NULL REFERENCES accounts (id),
  company_id     uuid REFERENCES companies (id),
  -- json, not jsonb: data.object keeps the producer's bytes and key order.
  object         json NOT NULL,
  created        timestamptz NOT NULL
);
-- The event logs list newest first; test events are never listed.
CREATE INDEX events_company ON events (company_id, created, id) WHERE NOT test;
CREATE INDEX events_account ON events (account_id, created, id) WHERE NOT test;
-- The logs filtered by type: without these, a type with few or no events
-- reads the whole log (or the whole table).
CREATE INDEX events_company_type ON events (company_id, type, created, id) WHERE NOT test;
CREATE INDEX events_account_type ON events (account_id, type, created, id) WHERE NOT test;
CREATE INDEX events_created ON events (created);

CREATE TABLE idempotency_keys (
  key          text PRIMARY KEY,
  request_hash bytea NOT NULL,
  event_id     uuid NOT NULL REFERENCES events (id),
  created      timestamptz NOT NULL
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created);
-- For the foreign key, when the purge deletes events.
CREATE INDEX idempotency_keys_event ON idempotency_keys (event_id);

-- The deliveries table is also the work queue: a pending delivery is due at
-- next_attempt_at, and a worker that claims it sets lease_token and
-- lease_expires; the claim lapses when lease_expires passes. A due delivery
-- whose endpoint holds its cap of claims is parked: out of the due index
-- until the endpoint has a free slot, so that a deep backlog on one endpoint
-- is not read again at every claim.
CREATE TABLE deliveries (
  id                   uuid PRIMARY KEY,
  endpoint_id          uuid NOT NULL REFERENCES endpoints (id),
  event_id             uuid NOT NULL REFERENCES events (id),
  event_type           text NOT NULL,
  relationship         text,
  replay_of            uuid REFERENCES deliveries (id),
  status               text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'failed_permanently')),
  reason               text,
  attempt_count        integer NOT NULL,
  next_attempt_at      timestamptz,
  last_response_status integer,
  manual               boolean NOT NULL,
  parked               boolean NOT NULL DEFAULT false,
  body                 bytea NOT NULL,
  lease_token          text,
  lease_expires        timestamptz,
  created              timestamptz NOT NULL,
  updated              timestamptz NOT NULL
);
-- The queue's rows are updated several times each (claimed, recorded):
-- room on each page lets an update stay on its page, and an eager
-- autovacuum keeps the queue's partial indexes free of dead entries, which
-- every claim would otherwise read through.
ALTER TABLE deliveries SET (fillfactor = 85, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);
-- At most one original delivery per endpoint and event; replays are extra.
CREATE UNIQUE INDEX deliveries_original ON deliveries (endpoint_id, event_id) WHERE replay_of IS NULL;
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, id);
-- The history filtered by status: a status with few or no deliveries would
-- otherwise read the endpoint's whole history (or the whole table).
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created, id);
-- For the foreign key, when the purge deletes originals.
CREATE INDEX deliveries_replay_of ON deliveries (replay_of) WHERE replay_of IS NOT NULL;
-- Recover's "newest delivery of the event on this endpoint".
CREATE INDEX deliveries_event ON deliveries (event_id, endpoint_id);
-- The queue: due deliveries in order (id breaks ties, and is the cursor of
-- a claim's chunks). Partial, so that the history (nearly every row) is not
-- in it.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending' AND NOT parked;
-- Parked deliveries per endpoint, in the order they come back.
CREATE INDEX deliveries_parked ON deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending' AND parked;
-- Claims held now (and lapsed ones not yet cleared), counted per endpoint for
-- the per-endpoint cap.
CREATE INDEX deliveries_leased ON deliveries (lease_expires, endpoint_id) WHERE lease_expires IS NOT NULL;

CREATE TABLE attempts (
  delivery_id     uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number          integer NOT NULL,
  started_at      timestamptz NOT NULL,
  duration_ms     bigint NOT NULL,
  response_status integer,
  -- bytea: the first KiB of an answer need not be valid UTF-8.
  response_body   bytea NOT NULL,
  error           text,
  manual          boolean NOT NULL,
  PRIMARY KEY (delivery_id, number)
);

CREATE TABLE audit_log (
  id          uuid PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id),
  actor_type  text NOT NULL,
  actor_id    text,
  action      text NOT NULL,
  target_type text NOT NULL,
  -- text: a refused change may have no target id yet.
  target_id   text NOT NULL,
  outcome     text NOT NULL,
  error_code  text,
  created     timestamptz NOT NULL
);
CREATE INDEX audit_log_account ON audit_log (account_id, created, id);
