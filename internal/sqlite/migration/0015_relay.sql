-- The local relay (SPEC 20): relay endpoints, which have no URL, and what
-- carries their attempts between the process that makes an attempt and
-- the process that holds the endpoint's `webhooks listen` connection,
-- which may be another one on a shared database.
--
-- relay_sessions holds, per relay endpoint, the connection that receives
-- its requests until expires (renewed while it lives; a newer connection
-- takes it over). relay_requests is the mailbox: an attempt puts its
-- signed request, the holder takes it (session_id set) and sends it, the
-- listener's answer is stored on it, the attempt reads it and deletes the
-- row. A row outlives its attempt only when that process died; the next
-- take of the endpoint deletes it.
ALTER TABLE endpoints ADD COLUMN relay INTEGER NOT NULL DEFAULT 0;

CREATE TABLE relay_sessions (
  endpoint_id TEXT PRIMARY KEY,
  session_id  TEXT NOT NULL,
  expires     INTEGER NOT NULL
);

CREATE TABLE relay_requests (
  id          TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  header      TEXT NOT NULL,
  body        BLOB NOT NULL,
  created     INTEGER NOT NULL,
  session_id  TEXT,
  answer      TEXT
);
CREATE INDEX relay_requests_endpoint ON relay_requests (endpoint_id, created);
