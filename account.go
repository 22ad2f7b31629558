package webhooks

import (
	"strings"
	"time"
)

// Account is a customer of the platform. A managed account is provisioned by
// another account (ProvisionedBy), e.g. an accounting firm that runs its
// clients' accounts; there is one level only, so a managed account cannot
// provision another.
type Account struct {
	ID            string
	Name          string
	ProvisionedBy string // empty when the account is not managed
	Created       time.Time
	// Deleted is when the account was deleted (SPEC 19): zero for every
	// account but a deleted one's tombstone, which only the admin's
	// reading of its audit log sees.
	Deleted time.Time
}

// Managed reports whether another account provisioned a.
func (a *Account) Managed() bool { return a.ProvisionedBy != "" }

// Validate checks the fields a caller provides.
func (a *Account) Validate() error {
	a.Name = strings.TrimSpace(a.Name)
	if a.Name == "" {
		return Errorf(EINVALID, "name is required.")
	}
	if err := CheckLength("name", a.Name, MaxNameLength); err != nil {
		return err
	}
	if a.ProvisionedBy != "" && !ValidID(a.ProvisionedBy) {
		return Errorf(EINVALIDPROVISIONING, "provisioned_by %q is not an account id.", a.ProvisionedBy)
	}
	return nil
}

// UnknownAccount is the error of a request whose account_id names no
// account: an event's, or a company's.
func UnknownAccount(id string) *Error {
	return Errorf(EUNKNOWNACCOUNT, "account_id %s is not an account.", id)
}

// APIKey is an account's key to the API. Only a hash of the key is stored:
// the key itself is shown once, when it is created.
type APIKey struct {
	ID        string
	AccountID string
	Hash      []byte
	Created   time.Time
}
