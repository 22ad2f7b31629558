package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// testOutbox: what attempts make happen to their endpoints (SPEC 14) is
// stored in the transaction that records them, as outbox entries, and
// drained into registration, each in the transaction that deletes it: a
// crash at any step neither loses an operational event nor registers it
// twice. An attempt whose claim had lapsed counts in its endpoint's streak
// like any other, and changes nothing of its delivery.
func testOutbox(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Outbox", func(t *testing.T) {
		t.Run("LapsedClaimCounts", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			d := q.add(t, e, t0)
			stale := MustClaimOne(t, s, d.ID, t0)
			fresh := MustClaimOne(t, s, d.ID, at(2*time.Minute)) // after the first lease
			r := NewRecord(stale, at(90*time.Second), 503, retryAt(at(time.Hour)))
			MustRecord(t, s, r)
			if !r.Lapsed {
				t.Errorf("the record of a lapsed claim: Lapsed false")
			}
			if got := MustFindEndpoint(t, s, e.ID); got.FailureStreak != 1 || !got.FailingSince.Equal(at(90*time.Second)) {
				t.Errorf("after a lapsed claim's failure: streak %d since %v, want 1 since %v", got.FailureStreak, got.FailingSince, at(90*time.Second))
			}
			if got := MustFindDelivery(t, s, d.ID); got.AttemptCount != 0 || len(got.Attempts) != 0 || got.Status != webhooks.DeliveryPending {
				t.Errorf("the delivery after its lapsed claim's record: %s, %d attempts; want it as the new claim left it", got.Status, got.AttemptCount)
			}
			r2 := NewRecord(fresh, at(2*time.Minute), 503, retryAt(at(time.Hour)))
			MustRecord(t, s, r2)
			if got := MustFindEndpoint(t, s, e.ID); got.FailureStreak != 2 {
				t.Errorf("after the new claim's failure too: streak %d, want 2", got.FailureStreak)
			}
			if r2.Lapsed || MustFindDelivery(t, s, d.ID).AttemptCount != 1 {
				t.Errorf("the new claim's record: Lapsed %t, want it stored", r2.Lapsed)
			}
		})

		// A stale record and the new claim's, of the same attempt number,
		// both ending the delivery failed_permanently: one exhausted.
		t.Run("OneExhaustedPerDelivery", func(t *testing.T) {
			s := setup(t, open)
			platform := mustPlatformEndpoint(t, s)
			q := newQueue(s)
			d := q.add(t, q.endpoint(t), t0)
			stale := MustClaimOne(t, s, d.ID, t0)
			fresh := MustClaimOne(t, s, d.ID, at(2*time.Minute))
			now := at(2 * time.Minute)
			records := []*webhooks.AttemptRecord{NewRecord(stale, now, 422, failedPermanently), NewRecord(fresh, now, 422, failedPermanently)}
			if err := s.RecordAttempts(t.Context(), records); err != nil {
				t.Fatal(err)
			}
			if records[0].Exhausted || !records[1].Exhausted {
				t.Errorf("Exhausted: stale %t, new %t; want the new claim's alone", records[0].Exhausted, records[1].Exhausted)
			}
			if got := kinds(mustOutbox(t, s)); !slices.Equal(got, []string{webhooks.EventDeliveryExhausted}) {
				t.Errorf("outbox: got %v, want one exhausted", got)
			}
			mustDrain(t, s, now)
			if got := operationalTypes(t, s, platform.ID); !slices.Equal(got, []string{webhooks.EventDeliveryExhausted}) {
				t.Errorf("operational events: got %v, want one exhausted", got)
			}
		})

		// A crash at each step between an attempt and its operational
		// event: before the record commits, after it and before the
		// drain, during the drain, after it. Each time the process's
		// memory is lost (a new stack over the same database) and what
		// was committed stays.
		for _, tc := range []struct {
			name   string
			status int
			tr     webhooks.Transition
			want   string
		}{
			{"Failing", 503, retryAt(at(24 * time.Hour)), webhooks.EventEndpointFailing},
			{"Exhausted", 422, failedPermanently, webhooks.EventDeliveryExhausted},
			{"DisabledGone", 410, failedPermanently, webhooks.EventEndpointDisabled},
		} {
			t.Run("CrashAtEachStep/"+tc.name, func(t *testing.T) {
				s := setup(t, open)
				platform := mustPlatformEndpoint(t, s)
				q := newQueue(s)
				e := q.endpoint(t)
				// Three failures before: the fourth makes the endpoint
				// failing.
				for i := range 3 {
					d := q.add(t, e, at(time.Duration(i)*time.Second))
					MustAttempt(t, s, d.ID, at(time.Duration(i)*time.Second), 503, retryAt(at(24*time.Hour)))
				}
				d := q.add(t, e, at(time.Minute))
				now := at(time.Minute)

				// 1. The process dies before the record commits: nothing
				// of the attempt is stored, its claim lapses and another
				// process makes it again.
				c := MustClaimOne(t, s, d.ID, now)
				crashed := Stack(t, crashing{Driver: s, claims: true})
				if err := crashed.RecordAttempts(t.Context(), []*webhooks.AttemptRecord{NewRecord(c, now, tc.status, tc.tr)}); !errors.Is(err, errCrash) {
					t.Fatalf("the record that crashes: %v", err)
				}
				if n := len(mustOutbox(t, s)); n != 0 {
					t.Fatalf("outbox after a crash before the record committed: %d entries", n)
				}
				restarted := Stack(t, s)
				later := now.Add(2 * time.Minute) // the claim lapsed
				c = MustClaimOne(t, restarted, d.ID, later)
				MustRecord(t, restarted, NewRecord(c, later, tc.status, tc.tr))
				entries := mustOutbox(t, s)
				want := tc.want
				if tc.want == webhooks.EventEndpointDisabled {
					want = webhooks.OutboxDisable
				}
				if !slices.Contains(kinds(entries), want) {
					t.Fatalf("outbox after the record: %v, want %s among them", kinds(entries), want)
				}

				// 2. The process dies after the record, before the drain:
				// the entries wait. 3. It dies during the drain: the
				// drain's transaction rolls back.
				if _, err := UseCases(Stack(t, crashing{Driver: s, txs: true}), later).DrainOutbox(t.Context(), 100); err == nil {
					if n := len(mustOutbox(t, s)); n != len(entries) {
						t.Fatalf("a drain that crashed before its commit deleted %d entries", len(entries)-n)
					}
				}
				if got := operationalTypes(t, s, platform.ID); len(got) != 0 {
					t.Fatalf("operational events after a drain that crashed: %v", got)
				}
				// The next process drains them, once; a drain after that
				// finds nothing.
				mustDrain(t, Stack(t, s), later)
				mustDrain(t, Stack(t, s), later.Add(time.Second))
				got := operationalTypes(t, s, platform.ID)
				if n := count(got, tc.want); n != 1 {
					t.Errorf("%s events: got %d (%v), want 1", tc.want, n, got)
				}
				if tc.want == webhooks.EventEndpointDisabled {
					if ep := MustFindEndpoint(t, s, e.ID); ep.Enabled() || ep.DisabledReason != webhooks.DisabledGone {
						t.Errorf("endpoint after the drain: %s (%s), want disabled gone", ep.Status, ep.DisabledReason)
					}
					audits := 0
					for _, a := range MustListAudit(t, s, e.AccountID) {
						if a.Action == webhooks.AuditEndpointDisabled && a.Actor.Type == webhooks.ActorSystem {
							audits++
						}
					}
					if audits != 1 {
						t.Errorf("the system's disables in the audit log: %d, want 1", audits)
					}
				}
				if n := len(mustOutbox(t, s)); n != 0 {
					t.Errorf("outbox after the drains: %d entries left", n)
				}
			})
		}

		// A short DisableAfter disables at the first failure past it: the
		// episode begins at its first failed attempt, and the disable does
		// not wait for failing (the fourth).
		t.Run("DisableAfterBeforeFailing", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			first := q.add(t, e, t0)
			MustAttempt(t, s, first.ID, t0, 503, retryAt(at(24*time.Hour)))
			second := q.add(t, e, at(time.Hour))
			c := MustClaimOne(t, s, second.ID, at(time.Hour))
			short := Stack(t, s)
			short.(*stack).q = newCoreQueue(s, 30*time.Minute)
			MustRecord(t, short, NewRecord(c, at(time.Hour), 503, retryAt(at(24*time.Hour))))
			if got := kinds(mustOutbox(t, s)); !slices.Equal(got, []string{webhooks.OutboxDisable}) {
				t.Fatalf("outbox after the second failure, an hour after the first: %v, want a disable", got)
			}
			mustDrain(t, s, at(time.Hour))
			if ep := MustFindEndpoint(t, s, e.ID); ep.Enabled() || ep.DisabledReason != webhooks.DisabledFailing {
				t.Errorf("endpoint: %s (%s), want disabled for failing", ep.Status, ep.DisabledReason)
			}
		})
	})
}

// errCrash is what crashing's steps fail with: the process died there.
var errCrash = errors.New("storetest: the process died here")

// crashing is a backend whose claims (claims) or durable transactions
// (txs) die after their work and before their commit: they roll back.
type crashing struct {
	driver.Driver
	claims, txs bool
}

func (c crashing) Claim(ctx context.Context, fn func(tx driver.QueueTx) (*driver.QueueWrites, error)) ([]*webhooks.Claim, error) {
	if !c.claims {
		return c.Driver.Claim(ctx, fn)
	}
	return c.Driver.Claim(ctx, func(tx driver.QueueTx) (*driver.QueueWrites, error) {
		if _, err := fn(tx); err != nil {
			return nil, err
		}
		return nil, errCrash
	})
}

func (c crashing) InTx(ctx context.Context, fn func(tx driver.Tx) error) error {
	if !c.txs {
		return c.Driver.InTx(ctx, fn)
	}
	return c.Driver.InTx(ctx, func(tx driver.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errCrash
	})
}

// mustPlatformEndpoint creates a platform endpoint, which receives the
// operational events.
func mustPlatformEndpoint(tb testing.TB, s Store) *webhooks.Endpoint {
	tb.Helper()
	return MustCreateEndpoint(tb, s, &webhooks.Endpoint{Scope: webhooks.ScopePlatform,
		URL: "https://ops.example.com/hooks", EnabledEvents: []string{"*"}, Livemode: true})
}

// mustOutbox returns the outbox's entries.
func mustOutbox(tb testing.TB, s Store) []*webhooks.OutboxEntry {
	tb.Helper()
	var out []*webhooks.OutboxEntry
	err := s.InTx(tb.Context(), func(tx driver.Tx) error {
		var err error
		out, err = tx.Outbox(tb.Context(), 1000)
		return err
	})
	if err != nil {
		tb.Fatalf("Outbox: %v", err)
	}
	return out
}

// mustDrain drains the outbox with the use cases at now.
func mustDrain(tb testing.TB, s Store, now time.Time) {
	tb.Helper()
	if _, err := UseCases(s, now).DrainOutbox(tb.Context(), 100); err != nil {
		tb.Fatalf("DrainOutbox: %v", err)
	}
}

// operationalTypes returns the types of the events delivered to the
// platform endpoint, in the order they were made.
func operationalTypes(tb testing.TB, s Store, platformID string) []string {
	tb.Helper()
	ds := MustListDeliveries(tb, s, webhooks.DeliveryFilter{EndpointID: platformID})
	slices.Reverse(ds) // the list is newest first
	var out []string
	for _, d := range ds {
		out = append(out, d.EventType)
	}
	return out
}

func kinds(entries []*webhooks.OutboxEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Kind)
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
