-- Times are unix milliseconds. Ids are canonical UUIDv7 strings.

CREATE TABLE accounts (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  provisioned_by TEXT REFERENCES accounts (id),
  created        INTEGER NOT NULL
);

CREATE TABLE api_keys (
  id         TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  hash       BLOB NOT NULL UNIQUE,
  created    INTEGER NOT NULL
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE companies (
  id         TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  nif        TEXT NOT NULL UNIQUE,
  name       TEXT NOT NULL,
  created    INTEGER NOT NULL
);
CREATE INDEX companies_account ON companies (account_id, created, id);

-- An endpoint belongs to a company (company_id) or an account (account_id).
-- Deleted endpoints stay, with deleted set, so that their deliveries keep
-- their history until retention purges it.
CREATE TABLE endpoints (
  id                      TEXT PRIMARY KEY,
  scope                   TEXT NOT NULL CHECK (scope IN ('company', 'account')),
  company_id              TEXT REFERENCES companies (id),
  account_id              TEXT REFERENCES accounts (id),
  url                     TEXT NOT NULL,
  enabled_events          TEXT NOT NULL, -- JSON array
  relationships           TEXT NOT NULL, -- JSON array
  api_version             TEXT NOT NULL,
  livemode                INTEGER NOT NULL,
  description             TEXT NOT NULL,
  status                  TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
  secret                  TEXT NOT NULL,
  previous_secret         TEXT,
  previous_secret_expires INTEGER,
  created                 INTEGER NOT NULL,
  updated                 INTEGER NOT NULL,
  deleted                 INTEGER,
  CHECK ((scope = 'company' AND company_id IS NOT NULL AND account_id IS NULL)
      OR (scope = 'account' AND account_id IS NOT NULL AND company_id IS NULL))
);
CREATE INDEX endpoints_company ON endpoints (company_id, created, id) WHERE deleted IS NULL;
CREATE INDEX endpoints_account ON endpoints (account_id, created, id) WHERE deleted IS NULL;

CREATE TABLE events (
  id             TEXT PRIMARY KEY,
  type           TEXT NOT NULL,
  api_version    TEXT NOT NULL,
  livemode       INTEGER NOT NULL,
  test           INTEGER NOT NULL,
  correlation_id TEXT,
  account_id     TEXT NOT NULL REFERENCES accounts (id),
  company_id     TEXT REFERENCES companies (id),
  object         TEXT NOT NULL, -- data.object, compact JSON
  created        INTEGER NOT NULL
);
-- The event logs list newest first; test events are never listed. A list
-- filtered by type has its own index: walking the unfiltered one for a rare
-- type would read the whole log.
CREATE INDEX events_company ON events (company_id, created, id) WHERE test = 0;
CREATE INDEX events_account ON events (account_id, created, id) WHERE test = 0;
CREATE INDEX events_company_type ON events (company_id, type, created, id) WHERE test = 0;
CREATE INDEX events_account_type ON events (account_id, type, created, id) WHERE test = 0;
CREATE INDEX events_created ON events (created);

CREATE TABLE idempotency_keys (
  key          TEXT PRIMARY KEY,
  request_hash BLOB NOT NULL,
  event_id     TEXT NOT NULL REFERENCES events (id),
  created      INTEGER NOT NULL
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created);
-- For the foreign key, when the purge deletes events.
CREATE INDEX idempotency_keys_event ON idempotency_keys (event_id);

-- The deliveries table is also the work queue: a pending delivery is due at
-- next_attempt_at, and a worker that claims it sets lease_token and
-- lease_expires; the claim lapses when lease_expires passes. A due delivery
-- whose endpoint has its cap of claims is parked: out of the due index until
-- one of the endpoint's claims ends, so a deep backlog on one endpoint is not
-- scanned again at every claim.
CREATE TABLE deliveries (
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
  body                 BLOB NOT NULL,
  lease_token          TEXT,
  lease_expires        INTEGER,
  created              INTEGER NOT NULL,
  updated              INTEGER NOT NULL
);
-- At most one original delivery per endpoint and event; replays are extra.
CREATE UNIQUE INDEX deliveries_original ON deliveries (endpoint_id, event_id) WHERE replay_of IS NULL;
-- An endpoint's deliveries newest first, also by status (a rare status
-- would otherwise mean reading them all).
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created, id);
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created, id);
-- For the foreign key, when the purge deletes originals.
CREATE INDEX deliveries_replay_of ON deliveries (replay_of);
-- An event's deliveries, per endpoint in list order (the history's
-- event_id filter, recover's "no newer delivery of the event").
CREATE INDEX deliveries_event ON deliveries (event_id, endpoint_id, created, id);
-- The queue: due deliveries in order, with what a claim filters on.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id, endpoint_id, lease_expires) WHERE status = 'pending' AND parked = 0;
-- Parked deliveries per endpoint, in the order they come back.
CREATE INDEX deliveries_parked ON deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending' AND parked = 1;
-- Claims held now, counted per endpoint for the per-endpoint cap.
CREATE INDEX deliveries_leased ON deliveries (lease_expires, endpoint_id) WHERE lease_expires IS NOT NULL;

CREATE TABLE attempts (
  delivery_id     TEXT NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number          INTEGER NOT NULL,
  started_at      INTEGER NOT NULL,
  duration_ms     INTEGER NOT NULL,
  response_status INTEGER,
  response_body   BLOB NOT NULL,
  error           TEXT,
  manual          INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, number)
);

CREATE TABLE audit_log (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts (id),
  actor_type  TEXT NOT NULL,
  actor_id    TEXT,
  action      TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id   TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  error_code  TEXT,
  created     INTEGER NOT NULL
);
CREATE INDEX audit_log_account ON audit_log (account_id, created, id);
