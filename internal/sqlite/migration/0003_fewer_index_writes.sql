-- Three fewer index writes per delivery, on the one write connection.
--
-- Most deliveries are inserted already leased to the engine that attempts
-- them (see Store.SetEngine) and end at their first attempt. They never
-- need the due index: a leased delivery is not due, and one whose lease
-- lapsed is found through deliveries_leased. So the due index now holds
-- only the unleased deliveries, and a handed-over delivery enters and
-- leaves it no more (two writes).
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id, endpoint_id) WHERE status = 'pending' AND parked = 0 AND lease_expires IS NULL;
-- Few deliveries are replays: the foreign key's lookups (replay_of = ?)
-- use a partial index as well as a full one (one write).
DROP INDEX deliveries_replay_of;
CREATE INDEX deliveries_replay_of ON deliveries (replay_of) WHERE replay_of IS NOT NULL;
