-- The foreign keys from the two tables every registration writes to the
-- rows every registration shares: an event's account and company, a
-- delivery's endpoint. Checking one locks the parent row (FOR KEY SHARE),
-- and when many registrations for one company run at once those locks
-- become shared lock groups (MultiXacts) on one hot row: measured, the
-- check was nearly half of the cost of inserting an event. The parents are
-- never deleted (an endpoint's deletion only marks it), and the registering
-- transaction reads each of them before it writes, so the keys guarded
-- nothing the code does not.
ALTER TABLE events DROP CONSTRAINT events_account_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_company_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_endpoint_id_fkey;
