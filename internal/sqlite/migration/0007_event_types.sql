-- The event-type catalog (SPEC 16). example and schema are JSON text, as
-- the admin gave them (compacted); archived types stay, flagged.
CREATE TABLE event_types (
  name        TEXT PRIMARY KEY,
  description TEXT NOT NULL,
  example     TEXT,
  schema      TEXT,
  archived    INTEGER NOT NULL DEFAULT 0,
  created     INTEGER NOT NULL,
  updated     INTEGER NOT NULL
) WITHOUT ROWID;

-- catalog_version counts the changes to the catalog: the use cases check
-- events against a catalog held in memory, and every registration's
-- transaction reads this count to refuse one checked against an older
-- catalog. Triggers keep it, so that no write path can forget to.
CREATE TABLE catalog_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO catalog_version (id, version) VALUES (1, 0);

CREATE TRIGGER event_types_version_insert AFTER INSERT ON event_types BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER event_types_version_update AFTER UPDATE ON event_types BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER event_types_version_delete AFTER DELETE ON event_types BEGIN UPDATE catalog_version SET version = version + 1; END;
