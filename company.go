package webhooks

import (
	"strings"
	"time"
)

// Company is a business identified by its NIF and owned by one account. A NIF
// is unique on the platform.
type Company struct {
	ID        string
	AccountID string
	NIF       string // normalized: upper case, no spaces or dashes
	Name      string
	Created   time.Time
}

// Validate checks and normalizes the fields a caller provides.
func (c *Company) Validate() error {
	c.Name = strings.TrimSpace(c.Name)
	switch {
	case !ValidID(c.AccountID):
		return Errorf(EINVALID, "account_id must be an account id.")
	case c.Name == "":
		return Errorf(EINVALID, "name is required.")
	}
	if err := CheckLength("name", c.Name, MaxNameLength); err != nil {
		return err
	}
	nif, err := NormalizeNIF(c.NIF)
	if err != nil {
		return err
	}
	c.NIF = nif
	return nil
}

// NIFTaken is the error of a company whose NIF another company has.
func NIFTaken(nif string) *Error {
	return Errorf(ENIFTAKEN, "NIF %s already belongs to a company.", nif)
}
