-- The big lists' indexes without the id (issue 28).
--
-- A list is newest first by (created, id). Its index held the id too, to
-- break the ties of a microsecond: 16 bytes of every entry, and the
-- history's index (three endpoints insert at three places in it, so its
-- pages split in half and stay about 60 % full) pays them twice over. Now
-- the index gives the order by created, and the rare ties are sorted by
-- id as the page is read (an incremental sort of the rows of one
-- created); a page's cursor (created, id) < (c, i) is read from the
-- index as created <= c.
DROP INDEX deliveries_endpoint;
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created);
DROP INDEX events_company;
CREATE INDEX events_company ON events (company_id, created) WHERE NOT test;
DROP INDEX events_account;
CREATE INDEX events_account ON events (account_id, created) WHERE NOT test AND NOT operational;
DROP INDEX events_company_type;
CREATE INDEX events_company_type ON events (company_id, type, created) WHERE NOT test;
DROP INDEX events_account_type;
CREATE INDEX events_account_type ON events (account_id, type, created) WHERE NOT test AND NOT operational;
