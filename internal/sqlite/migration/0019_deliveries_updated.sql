-- A delivery's "updated" was written by every record and read by nothing
-- (the API's delivery object has no such field; its attempts say when
-- each was made): about 7 bytes of every row (issue 28). SQLite rewrites
-- the table's rows without it, in place (its indexes do not hold it):
-- about 2 s for 2 million rows on the sqlite3 shell.
ALTER TABLE deliveries DROP COLUMN updated;
