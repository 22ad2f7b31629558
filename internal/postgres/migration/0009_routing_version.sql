-- routing_version counts the changes to what routes an event (accounts,
-- companies, endpoints), in the changing transaction. Every process caches
-- the routes its registrations read, and a registration group trusts them
-- only while this count is the one they were read at (see route.go). The
-- triggers keep it, so that no write path can forget to. An endpoint's
-- streak of failures, which the engine writes at every failed attempt,
-- routes nothing: an outage must not empty the caches.
CREATE TABLE routing_version (
  id      int PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL
);
INSERT INTO routing_version (id, version) VALUES (1, 0);

CREATE FUNCTION routing_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE routing_version SET version = version + 1;
  RETURN NULL;
END
$$;
CREATE TRIGGER accounts_routing AFTER INSERT OR UPDATE OR DELETE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION routing_version_bump();
CREATE TRIGGER companies_routing AFTER INSERT OR UPDATE OR DELETE ON companies
  FOR EACH STATEMENT EXECUTE FUNCTION routing_version_bump();
CREATE TRIGGER endpoints_routing AFTER INSERT OR DELETE ON endpoints
  FOR EACH STATEMENT EXECUTE FUNCTION routing_version_bump();
CREATE TRIGGER endpoints_routing_update AFTER UPDATE OF scope, company_id, account_id, url, enabled_events, relationships,
    api_version, livemode, description, status, secret, previous_secret, previous_secret_expires, deleted,
    standard_webhooks, rate_limit, disabled_at, disabled_reason ON endpoints
  FOR EACH STATEMENT EXECUTE FUNCTION routing_version_bump();
