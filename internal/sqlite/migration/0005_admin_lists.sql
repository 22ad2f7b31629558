-- The admin's lists (SPEC 13): every account, and an account's API keys,
-- newest first, each served by an index without sorting.
CREATE INDEX accounts_created ON accounts (created, id);
DROP INDEX api_keys_account;
CREATE INDEX api_keys_account ON api_keys (account_id, created, id);
