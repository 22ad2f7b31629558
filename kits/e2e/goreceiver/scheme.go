package main

import (
	"errors"
	"fmt"

	"github.com/factuarea/webhooks/receiver"
)

// setScheme applies WEBHOOK_SCHEME. The kit verifies Factuarea-Signature;
// the Standard Webhooks headers need receiver.Config.Scheme, so "standard"
// is refused rather than run as something it is not.
func setScheme(cfg *receiver.Config, scheme string) error {
	switch scheme {
	case "", "any", "factuarea":
		return nil
	case "standard":
		return errors.New("WEBHOOK_SCHEME=standard: this receiver kit verifies Factuarea-Signature only (no receiver.Config.Scheme)")
	}
	return fmt.Errorf("WEBHOOK_SCHEME=%q: want any, factuarea or standard", scheme)
}
