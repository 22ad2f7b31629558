// Package storetest is the one test suite every storage backend passes. A
// backend's tests call Run with a function that opens a fresh, empty
// store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) driver.Driver { ... })
//	}
//
// The suite uses only the interfaces and the domain package: no SQL, no
// files. It runs the queue core (internal/queue) and the use cases
// (internal/app) on the backend, so that their rules hold on every
// backend, and drives the methods the delivery engine uses (claims,
// attempts) directly. Every time comes from a fixed t0. Each
// leaf test opens its own store and runs in parallel with the others, so
// keep each one's data small.
package storetest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	core "github.com/factuarea/webhooks/internal/queue"
)

// Store is what the suite exercises: a backend under the queue core, with
// the registrar's and the queue's methods beside the backend's own.
type Store interface {
	driver.Driver
	// Register and RegisterEvent register through the queue core's
	// registrar.
	Register(ctx context.Context, r core.Registration) (*webhooks.Event, []*webhooks.Delivery, bool, error)
	RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error)
	// ClaimDeliveries and RecordAttempts are the queue core's (the engine's
	// Queue), with the default health rule.
	ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error)
	RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error
	// SetEngine makes the registrar hand what it registers to e; if e has
	// a Wake method, it is called for what it was not handed.
	SetEngine(e core.Engine)
}

// Stack returns d under a queue core of its own, as the service runs it.
func Stack(tb testing.TB, d driver.Driver) Store {
	st := &stack{Driver: d}
	st.reg = core.NewRegistrar(d, st.announce)
	st.q = newCoreQueue(d, webhooks.DefaultDisableAfter)
	tb.Cleanup(st.reg.Close)
	return st
}

// newCoreQueue returns the queue core's queue on d, which disables an
// endpoint whose every attempt failed for disableAfter.
func newCoreQueue(d driver.Driver, disableAfter time.Duration) *core.Queue {
	return core.NewQueue(d, core.QueueConfig{Health: webhooks.HealthRule{DisableAfter: disableAfter}})
}

// stack is a Store.
type stack struct {
	driver.Driver
	reg    *core.Registrar
	q      *core.Queue
	engine atomic.Pointer[core.Engine]
}

func (st *stack) Register(ctx context.Context, r core.Registration) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	return st.reg.Register(ctx, r)
}

func (st *stack) RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	return st.reg.Register(ctx, core.Registration{Event: ev, Key: key})
}

func (st *stack) ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	return st.q.ClaimDeliveries(ctx, r)
}

func (st *stack) RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error {
	return st.q.RecordAttempts(ctx, records)
}

func (st *stack) SetEngine(e core.Engine) {
	st.engine.Store(&e)
	st.reg.SetEngine(e)
}

func (st *stack) announce() {
	if e := st.engine.Load(); e != nil {
		if w, ok := (*e).(interface{ Wake() }); ok {
			w.Wake()
		}
	}
}

// Run runs the suite against stores made by open; each call of open returns
// a fresh, empty store (the suite may call it many times) and registers its
// own cleanup.
func Run(t *testing.T, openDriver func(t *testing.T) driver.Driver) {
	open := func(t *testing.T) Store { return Stack(t, openDriver(t)) }
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
	testOutbox(t, open)
	testOrdering(t, open)
	testBacklog(t, open)
	testDeferClaims(t, open)
	testAudit(t, open)
	testConcurrency(t, open)
	testMaintenance(t, open)
	testEventTypes(t, open)
	testLifecycle(t, open)
	testRelay(t, open)
	testBodies(t, open)
}
