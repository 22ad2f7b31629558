-- routing_version counts the changes to what routes an event (accounts,
-- companies, endpoints): the registrar caches its routing lookups and
-- drops them when the count moves. Triggers keep it, so that no write path
-- can forget to.
CREATE TABLE routing_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO routing_version (id, version) VALUES (1, 0);

CREATE TRIGGER accounts_routing_insert AFTER INSERT ON accounts BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER accounts_routing_update AFTER UPDATE ON accounts BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER accounts_routing_delete AFTER DELETE ON accounts BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER companies_routing_insert AFTER INSERT ON companies BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER companies_routing_update AFTER UPDATE ON companies BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER companies_routing_delete AFTER DELETE ON companies BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER endpoints_routing_insert AFTER INSERT ON endpoints BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER endpoints_routing_update AFTER UPDATE ON endpoints BEGIN UPDATE routing_version SET version = version + 1; END;
CREATE TRIGGER endpoints_routing_delete AFTER DELETE ON endpoints BEGIN UPDATE routing_version SET version = version + 1; END;
