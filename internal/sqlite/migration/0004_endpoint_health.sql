-- Endpoint health, operational events and per-endpoint options (SPEC 14,
-- 15, 17).
--
-- endpoints gains the platform scope (SQLite cannot change a CHECK in
-- place, so the table is rebuilt: the migrations run with foreign keys
-- off, see Store.migrateFile), the options a customer sets
-- (standard_webhooks, rate_limit) and the health the engine keeps
-- (failure_streak, failing_since, disabled_at, disabled_reason).
CREATE TABLE endpoints_new (
  id                      TEXT PRIMARY KEY,
  scope                   TEXT NOT NULL CHECK (scope IN ('company', 'account', 'platform')),
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
  standard_webhooks       INTEGER NOT NULL DEFAULT 0,
  rate_limit              INTEGER CHECK (rate_limit BETWEEN 1 AND 10000),
  failure_streak          INTEGER NOT NULL DEFAULT 0,
  failing_since           INTEGER,
  disabled_at             INTEGER,
  disabled_reason         TEXT CHECK (disabled_reason IN ('manual', 'failing', 'gone')),
  CHECK ((scope = 'company' AND company_id IS NOT NULL AND account_id IS NULL)
      OR (scope = 'account' AND account_id IS NOT NULL AND company_id IS NULL)
      OR (scope = 'platform' AND account_id IS NULL AND company_id IS NULL))
);
INSERT INTO endpoints_new (id, scope, company_id, account_id, url, enabled_events, relationships, api_version, livemode,
    description, status, secret, previous_secret, previous_secret_expires, created, updated, deleted, disabled_at, disabled_reason)
  SELECT id, scope, company_id, account_id, url, enabled_events, relationships, api_version, livemode,
    description, status, secret, previous_secret, previous_secret_expires, created, updated, deleted,
    CASE WHEN status = 'disabled' THEN updated END, CASE WHEN status = 'disabled' THEN 'manual' END
  FROM endpoints;
DROP TABLE endpoints;
ALTER TABLE endpoints_new RENAME TO endpoints;
CREATE INDEX endpoints_company ON endpoints (company_id, created, id) WHERE deleted IS NULL;
CREATE INDEX endpoints_account ON endpoints (account_id, created, id) WHERE deleted IS NULL;
CREATE INDEX endpoints_platform ON endpoints (created, id) WHERE scope = 'platform' AND deleted IS NULL;

-- The routing cache (0002) is dropped when what routes an event changes,
-- not when the engine counts an endpoint's failures: an outage must not
-- empty the cache at every failed attempt.
CREATE TRIGGER endpoints_routing_insert AFTER INSERT ON endpoints BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER endpoints_routing_update AFTER UPDATE OF scope, company_id, account_id, url, enabled_events, relationships,
    api_version, livemode, description, status, secret, previous_secret, previous_secret_expires, deleted,
    standard_webhooks, rate_limit ON endpoints
  BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER endpoints_routing_delete AFTER DELETE ON endpoints BEGIN UPDATE routing_version SET version = version + 1; END;

-- Operational events (SPEC 14) belong to the platform: they are stored
-- like any event, under the account they are about, but never listed in
-- that account's event log.
ALTER TABLE events ADD COLUMN operational INTEGER NOT NULL DEFAULT 0;
DROP INDEX events_account;
DROP INDEX events_account_type;
CREATE INDEX events_account ON events (account_id, created, id) WHERE test = 0 AND operational = 0;
CREATE INDEX events_account_type ON events (account_id, type, created, id) WHERE test = 0 AND operational = 0;

-- An outage rehearsal's delivery (SPEC 17) follows the retry schedule with
-- every wait divided by this factor; 1 for every other delivery.
ALTER TABLE deliveries ADD COLUMN schedule_factor INTEGER NOT NULL DEFAULT 1;
