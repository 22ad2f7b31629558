-- Endpoint health, operational events and per-endpoint options (SPEC 14,
-- 15, 17): the platform scope, the options a customer sets
-- (standard_webhooks, rate_limit) and the health the engine keeps
-- (failure_streak, failing_since, disabled_at, disabled_reason).
ALTER TABLE endpoints DROP CONSTRAINT endpoints_scope_check;
ALTER TABLE endpoints DROP CONSTRAINT endpoints_check;
ALTER TABLE endpoints ADD CONSTRAINT endpoints_scope_check CHECK (scope IN ('company', 'account', 'platform'));
ALTER TABLE endpoints ADD CONSTRAINT endpoints_owner_check CHECK (
       (scope = 'company' AND company_id IS NOT NULL AND account_id IS NULL)
    OR (scope = 'account' AND account_id IS NOT NULL AND company_id IS NULL)
    OR (scope = 'platform' AND account_id IS NULL AND company_id IS NULL));
ALTER TABLE endpoints
  ADD COLUMN standard_webhooks boolean NOT NULL DEFAULT false,
  ADD COLUMN rate_limit integer CHECK (rate_limit BETWEEN 1 AND 10000),
  ADD COLUMN failure_streak integer NOT NULL DEFAULT 0,
  ADD COLUMN failing_since timestamptz,
  ADD COLUMN disabled_at timestamptz,
  ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('manual', 'failing', 'gone'));
UPDATE endpoints SET disabled_at = updated, disabled_reason = 'manual' WHERE status = 'disabled';
CREATE INDEX endpoints_platform ON endpoints (created, id) WHERE scope = 'platform' AND deleted IS NULL;

-- Operational events (SPEC 14) belong to the platform: they are stored
-- like any event, under the account they are about, but never listed in
-- that account's event log.
ALTER TABLE events ADD COLUMN operational boolean NOT NULL DEFAULT false;
DROP INDEX events_account;
DROP INDEX events_account_type;
CREATE INDEX events_account ON events (account_id, created, id) WHERE NOT test AND NOT operational;
CREATE INDEX events_account_type ON events (account_id, type, created, id) WHERE NOT test AND NOT operational;

-- An outage rehearsal's delivery (SPEC 17) follows the retry schedule with
-- every wait divided by this factor; 1 for every other delivery.
ALTER TABLE deliveries ADD COLUMN schedule_factor integer NOT NULL DEFAULT 1;

-- The rate limit (SPEC 14) holds across processes: each attempt to a
-- limited endpoint takes the next start time from here (see Store.Reserve).
CREATE TABLE endpoint_rates (
  endpoint_id uuid PRIMARY KEY REFERENCES endpoints (id),
  next_start  timestamptz NOT NULL
);
