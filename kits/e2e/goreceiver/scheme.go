package main

import (
	"fmt"

	"github.com/factuarea/webhooks/receiver"
)

// setScheme applies WEBHOOK_SCHEME: any (the kit's default), factuarea or
// standard.
func setScheme(cfg *receiver.Config, scheme string) error {
	switch scheme {
	case "", "any":
		cfg.Scheme = receiver.SchemeAny
	case "factuarea":
		cfg.Scheme = receiver.SchemeFactuarea
	case "standard":
		cfg.Scheme = receiver.SchemeStandard
	default:
		return fmt.Errorf("WEBHOOK_SCHEME=%q: want any, factuarea or standard", scheme)
	}
	return nil
}
