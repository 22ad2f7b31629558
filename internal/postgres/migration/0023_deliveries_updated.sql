-- A delivery's "updated" was written by every record and read by nothing
-- (the API's delivery object has no such field; its attempts say when
-- each was made): 8 bytes of every row, and of every dead version a
-- record leaves until a vacuum (issue 28). Dropping a column changes only
-- the catalog: a row stored before keeps its bytes until it is next
-- written; one stored after has none for it.
ALTER TABLE deliveries DROP COLUMN updated;
