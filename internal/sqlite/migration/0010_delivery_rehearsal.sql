-- An outage rehearsal's delivery is marked as one (SPEC 17), stored with
-- it: its schedule_factor is 1 when the retry schedule fits in ten minutes
-- already, so the factor cannot tell a rehearsal. The rehearsals made
-- before this migration are the deliveries whose factor is over 1 (one
-- pass over the table, once).
ALTER TABLE deliveries ADD COLUMN rehearsal INTEGER NOT NULL DEFAULT 0;
UPDATE deliveries SET rehearsal = 1 WHERE schedule_factor > 1;
