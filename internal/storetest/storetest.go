// Package storetest is the one test suite every webhooks.Store backend
// passes. A backend's tests call Run with a function that opens a fresh,
// empty store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) webhooks.Store { ... })
//	}
//
// The suite uses only the webhooks.Store interface and the domain package:
// no SQL, no files. It passes every time to the store explicitly, from a
// fixed t0, and drives the methods the delivery engine uses (claims,
// attempts) directly. Each leaf test opens its own store and runs in
// parallel with the others, so keep each one's data small.
package storetest

import (
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// Run runs the suite against stores made by open; each call of open returns
// a fresh, empty store (the suite may call it many times) and registers its
// own cleanup.
func Run(t *testing.T, open func(t *testing.T) webhooks.Store) {
	t.Run("Ping", func(t *testing.T) {
		s := setup(t, open)
		if err := s.Ping(t.Context()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
	testAccounts(t, open)
	testAPIKeys(t, open)
	testCompanies(t, open)
	testEndpoints(t, open)
	testRotateSecret(t, open)
	testRegisterEvent(t, open)
	testRouting(t, open)
	testEvents(t, open)
	testSendTestEvent(t, open)
	testDeliveries(t, open)
	testRetryDelivery(t, open)
	testReplayDelivery(t, open)
	testRecover(t, open)
	testClaims(t, open)
	testRecordAttempts(t, open)
	testAudit(t, open)
	testConcurrency(t, open)
	testMaintenance(t, open)
}
