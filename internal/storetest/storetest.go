// Package storetest is the one test suite every storage backend passes. A
// backend's tests call Run with a function that opens a fresh, empty
// store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Store { ... })
//	}
//
// The suite uses only the interfaces and the domain package: no SQL, no
// files. It runs the use cases (internal/app) on the store, so that their
// rules hold on every backend, and drives the methods the delivery engine
// uses (claims, attempts) directly. Every time comes from a fixed t0. Each
// leaf test opens its own store and runs in parallel with the others, so
// keep each one's data small.
package storetest

import (
	"context"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/delivery"
)

// Store is what the suite exercises of a backend: the use cases' store, the
// engine's queue, and the maintenance the service runs.
type Store interface {
	app.Store
	delivery.Queue
	QueueStats(ctx context.Context, now time.Time) (webhooks.QueueStats, error)
	DeferClaims(ctx context.Context, deferrals []webhooks.Deferral) error
	Purge(ctx context.Context, before, now time.Time, limit int) (int, error)
	Ping(ctx context.Context) error
	SetEngine(e app.Engine)
}

// Run runs the suite against stores made by open; each call of open returns
// a fresh, empty store (the suite may call it many times) and registers its
// own cleanup.
func Run(t *testing.T, open func(t *testing.T) Store) {
	t.Run("Ping", func(t *testing.T) {
		s := setup(t, open)
		if err := s.Ping(t.Context()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
	testAccounts(t, open)
	testAPIKeys(t, open)
	testAdminLists(t, open)
	testClusterKeys(t, open)
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
	testRetrying(t, open)
	testClaims(t, open)
	testRecordAttempts(t, open)
	testHandOff(t, open)
	testTraceparents(t, open)
	testHealth(t, open)
	testDeferClaims(t, open)
	testAudit(t, open)
	testConcurrency(t, open)
	testMaintenance(t, open)
	testEventTypes(t, open)
}
