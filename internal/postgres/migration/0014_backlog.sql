-- The backlog alert and automatic recovery (SPEC 14).
--
-- since is when a queued delivery's first attempt or next retry came due:
-- a deferral for a rate limit or a cap moves due, not this. The backlog
-- index holds what is due and not started (unleased, not waiting behind
-- another of its chain), each endpoint's by that moment: the deliveries
-- handed to an engine at registration never enter it.
ALTER TABLE queue ADD COLUMN since timestamptz;
UPDATE queue SET since = due;
CREATE INDEX queue_backlog ON queue (endpoint_id, since)
  WHERE due IS NOT NULL AND NOT waiting AND lease_expires IS NULL;
-- When the alert of the episode under way fired, and when the service
-- last probed an endpoint disabled for failing.
ALTER TABLE endpoints ADD COLUMN backlogged_since timestamptz, ADD COLUMN probed_at timestamptz;
CREATE INDEX endpoints_backlogged ON endpoints (id) WHERE backlogged_since IS NOT NULL;
CREATE INDEX endpoints_to_probe ON endpoints (disabled_at)
  WHERE status = 'disabled' AND disabled_reason = 'failing' AND auto_recover AND deleted IS NULL;
