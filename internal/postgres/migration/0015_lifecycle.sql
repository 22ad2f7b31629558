-- Data lifecycle (SPEC 19): deleted accounts and companies stay as
-- tombstones (their events keep their owners; a company's NIF is freed),
-- erased events keep their row without their payload, and an erasure job
-- erases a deleted owner's events in chunks, resumable after a crash.
ALTER TABLE accounts ADD COLUMN deleted timestamptz;
ALTER TABLE companies ADD COLUMN deleted timestamptz;
ALTER TABLE events ADD COLUMN erased timestamptz;
CREATE INDEX accounts_provisioned_by ON accounts (provisioned_by) WHERE provisioned_by IS NOT NULL;

CREATE TABLE erasures (
  id            uuid PRIMARY KEY,
  company_id    uuid REFERENCES companies (id),
  account_id    uuid REFERENCES accounts (id),
  after_created timestamptz, -- the cursor: the last event erased
  after_id      uuid,
  created       timestamptz NOT NULL,
  CHECK ((company_id IS NULL) <> (account_id IS NULL))
);
CREATE INDEX erasures_company ON erasures (company_id) WHERE company_id IS NOT NULL;
CREATE INDEX erasures_account ON erasures (account_id) WHERE account_id IS NOT NULL;
