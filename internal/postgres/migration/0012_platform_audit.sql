-- The platform's own audit log (SPEC 8): the changes to platform endpoints
-- (SPEC 14), which belong to no account, are stored with account_id NULL,
-- as those endpoints' own account_id is. NULL rather than a sentinel
-- account: a sentinel would need a row in accounts (the foreign key),
-- which every account route and list would then have to hide, while NULL
-- matches no account's "account_id = $1", so no account's log can show a
-- platform entry. The platform's list reads "account_id IS NULL", served
-- by the same index (audit_log_account), which holds the NULLs too.
ALTER TABLE audit_log ALTER COLUMN account_id DROP NOT NULL;
