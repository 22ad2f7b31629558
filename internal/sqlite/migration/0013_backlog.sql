-- The backlog alert and automatic recovery (SPEC 14).
--
-- due_since is when a pending delivery's first attempt or next retry came
-- due: a deferral for a rate limit or a cap moves next_attempt_at, not
-- this. The backlog index holds what is due and not started (unleased, not
-- waiting behind another of its chain), each endpoint's by that moment:
-- the deliveries handed to an engine at registration never enter it.
ALTER TABLE deliveries ADD COLUMN due_since INTEGER;
UPDATE deliveries SET due_since = next_attempt_at WHERE status = 'pending';
CREATE INDEX deliveries_backlog ON deliveries (endpoint_id, due_since)
  WHERE status = 'pending' AND lease_expires IS NULL AND waiting_for IS NULL;
-- When the alert of the episode under way fired, and when the service
-- last probed an endpoint disabled for failing.
ALTER TABLE endpoints ADD COLUMN backlogged_since INTEGER;
ALTER TABLE endpoints ADD COLUMN probed_at INTEGER;
CREATE INDEX endpoints_backlogged ON endpoints (id) WHERE backlogged_since IS NOT NULL;
CREATE INDEX endpoints_to_probe ON endpoints (disabled_at)
  WHERE status = 'disabled' AND disabled_reason = 'failing' AND auto_recover = 1 AND deleted IS NULL;
