-- The platform's own audit log (SPEC 8): the changes to platform endpoints
-- (SPEC 14), which belong to no account, are stored with account_id NULL,
-- as those endpoints' own account_id is. NULL rather than a sentinel
-- account: a sentinel would need a row in accounts (the foreign key),
-- which every account route and list would then have to hide, while NULL
-- matches no account's "account_id = ?", so no account's log can show a
-- platform entry. The platform's list reads "account_id IS NULL", served
-- by the same index.
--
-- SQLite cannot drop a NOT NULL in place: the table is rebuilt (the
-- migrations run with foreign keys off, see Store.migrateFile; no table
-- refers to this one).
CREATE TABLE audit_log_new (
  id          TEXT PRIMARY KEY,
  account_id  TEXT REFERENCES accounts (id), -- NULL: the platform's
  actor_type  TEXT NOT NULL,
  actor_id    TEXT,
  action      TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id   TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  error_code  TEXT,
  created     INTEGER NOT NULL
);
INSERT INTO audit_log_new (id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created)
  SELECT id, account_id, actor_type, actor_id, action, target_type, target_id, outcome, error_code, created FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_account ON audit_log (account_id, created, id);
