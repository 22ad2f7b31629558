-- The event-type catalog (SPEC 16). example and schema are json (not
-- jsonb), which keeps the keys in the order the admin gave them; archived
-- types stay, flagged. Names sort in byte order (COLLATE "C"), as in
-- SQLite, whatever the database's collation: the list's cursor is a name.
CREATE TABLE event_types (
  name        text COLLATE "C" PRIMARY KEY,
  description text NOT NULL,
  example     json,
  schema      json,
  archived    boolean NOT NULL DEFAULT false,
  created     timestamptz NOT NULL,
  updated     timestamptz NOT NULL
);

-- catalog_version counts the changes to the catalog. Every process checks
-- events against a catalog held in memory, and each registration's
-- transaction reads this count to refuse an event checked against an
-- older catalog, however many processes share the database. The trigger
-- keeps it, so that no write path can forget to.
CREATE TABLE catalog_version (
  id      int PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL
);
INSERT INTO catalog_version (id, version) VALUES (1, 0);

CREATE FUNCTION catalog_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalog_version SET version = version + 1;
  RETURN NULL;
END
$$;
CREATE TRIGGER event_types_version AFTER INSERT OR UPDATE OR DELETE ON event_types
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_version_bump();
