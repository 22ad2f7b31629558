-- The keys every process on this database shares, in one row: the hash of
-- the platform's admin key, which the first process to start stores and
-- every later one must match, and the key that signs portal links, session
-- cookies and CSRF tokens. Both change only by an explicit rotation.
CREATE TABLE cluster_keys (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  admin_key_hash BLOB NOT NULL,
  portal_key     BLOB NOT NULL,
  updated        INTEGER NOT NULL
);
