-- An outage rehearsal's delivery is marked as one (SPEC 17), stored with
-- it: its schedule_factor is 1 when the retry schedule fits in ten minutes
-- already, so the factor cannot tell a rehearsal. The column with its
-- constant default is added without rewriting the table; the rehearsals
-- made before this migration are the deliveries whose factor is over 1
-- (one pass over the table, once, rewriting those rows only).
ALTER TABLE deliveries ADD COLUMN rehearsal boolean NOT NULL DEFAULT false;
UPDATE deliveries SET rehearsal = true WHERE schedule_factor > 1;
