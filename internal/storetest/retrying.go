package storetest

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// The reads behind the portal's health figures: the deliveries being
// retried, and each delivery's last attempt.
func testRetrying(t *testing.T, open func(t *testing.T) Store) {
	group(t, "CountRetrying", func(t *testing.T) {
		t.Run("Counts", func(t *testing.T) {
			s := setup(t, open)
			// An account endpoint each, so that every event reaches one.
			endpoint := func() *webhooks.Endpoint {
				a := MustCreateAccount(t, s, "")
				return MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			}
			failing, answering, down, quiet := endpoint(), endpoint(), endpoint(), endpoint()
			register := func(ep *webhooks.Endpoint, created time.Duration) *webhooks.Delivery {
				return MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", ep.AccountID, at(created)), ep.ID)
			}
			later := retryAt(at(48 * time.Hour))

			// failing: since = t0, buckets of an hour.
			sentByHand := register(failing, -2*time.Hour) // oldest, but a send by hand now
			MustFailPermanently(t, s, sentByHand.ID, at(-2*time.Hour))
			oldest := register(failing, -time.Hour) // before the window
			MustAttempt(t, s, oldest.ID, at(-time.Hour), 503, later)
			inFirst := register(failing, time.Minute)
			MustAttempt(t, s, inFirst.ID, at(time.Minute), 503, later)
			inThird := register(failing, 2*time.Hour+time.Minute)
			MustAttempt(t, s, inThird.ID, at(2*time.Hour+time.Minute), 0, retryAt(at(2*time.Hour+5*time.Minute)))
			MustAttempt(t, s, inThird.ID, at(2*time.Hour+5*time.Minute), 503, later)
			register(failing, 2*time.Hour+2*time.Minute) // pending, never attempted
			ok := register(failing, 2*time.Hour+3*time.Minute)
			MustAttempt(t, s, ok.ID, at(2*time.Hour+3*time.Minute), 200, delivered)
			gone := register(failing, 2*time.Hour+4*time.Minute)
			MustFailPermanently(t, s, gone.ID, at(2*time.Hour+4*time.Minute))
			resent := register(failing, 2*time.Hour+6*time.Minute) // in the window, sent by hand now
			MustFailPermanently(t, s, resent.ID, at(2*time.Hour+6*time.Minute))
			for _, d := range []*webhooks.Delivery{sentByHand, resent} {
				if _, err := retryDelivery(t, s, d.ID, at(3*time.Hour)); err != nil {
					t.Fatalf("retry: %v", err)
				}
			}
			if d := MustFindDelivery(t, s, resent.ID); d.Status != webhooks.DeliveryPending || d.AttemptCount != 1 || !d.Manual {
				t.Fatalf("the delivery sent by hand: %s after %d attempts, manual %t; want pending after 1, manual", d.Status, d.AttemptCount, d.Manual)
			}

			// answering: delivered only. down: retrying, never delivered.
			MustAttempt(t, s, register(answering, 10*time.Minute).ID, at(10*time.Minute), 200, delivered)
			downFirst := register(down, 30*time.Minute)
			MustAttempt(t, s, downFirst.ID, at(31*time.Minute), 0, later)

			counts, err := s.CountDeliveries(t.Context(), []string{failing.ID, answering.ID, down.ID, quiet.ID}, t0, time.Hour, driver.CountRetrying)
			if err != nil {
				t.Fatalf("CountRetrying: %v", err)
			}
			// The sends by hand are not retries of the schedule's, though
			// they are pending after a failed attempt (the portal shows
			// them as pending): neither counts, in the window or before it.
			wantCounts := []webhooks.DeliveryCount{
				{EndpointID: down.ID, Bucket: 0, Status: webhooks.DeliveryPending, N: 1},
				{EndpointID: failing.ID, Bucket: 0, Status: webhooks.DeliveryPending, N: 1},
				{EndpointID: failing.ID, Bucket: 2, Status: webhooks.DeliveryPending, N: 1},
			}
			byBucket := func(a, b webhooks.DeliveryCount) int {
				return cmp.Or(strings.Compare(a.EndpointID, b.EndpointID), cmp.Compare(a.Bucket, b.Bucket), strings.Compare(a.Status, b.Status))
			}
			slices.SortFunc(counts, byBucket)
			slices.SortFunc(wantCounts, byBucket)
			if !slices.Equal(counts, wantCounts) {
				t.Errorf("counts: got %+v, want %+v", counts, wantCounts)
			}

			// The states of the same window, which the retrying are a part
			// of: every state, pending ever attempted or not.
			states, err := s.CountDeliveries(t.Context(), []string{failing.ID, answering.ID, down.ID, quiet.ID}, t0, time.Hour, driver.CountAll)
			if err != nil {
				t.Fatalf("CountDeliveries: %v", err)
			}
			wantStates := []webhooks.DeliveryCount{
				{EndpointID: answering.ID, Bucket: 0, Status: webhooks.DeliveryDelivered, N: 1},
				{EndpointID: down.ID, Bucket: 0, Status: webhooks.DeliveryPending, N: 1},
				{EndpointID: failing.ID, Bucket: 0, Status: webhooks.DeliveryPending, N: 1},
				{EndpointID: failing.ID, Bucket: 2, Status: webhooks.DeliveryPending, N: 3},
				{EndpointID: failing.ID, Bucket: 2, Status: webhooks.DeliveryDelivered, N: 1},
				{EndpointID: failing.ID, Bucket: 2, Status: webhooks.DeliveryFailedPermanently, N: 1},
			}
			slices.SortFunc(states, byBucket)
			slices.SortFunc(wantStates, byBucket)
			if !slices.Equal(states, wantStates) {
				t.Errorf("states: got %+v, want %+v", states, wantStates)
			}
		})

		t.Run("NoEndpoints", func(t *testing.T) {
			s := setup(t, open)
			counts, err := s.CountDeliveries(t.Context(), nil, t0, time.Hour, driver.CountRetrying)
			if err != nil || len(counts) != 0 {
				t.Errorf("no endpoints: got %v, %v; want nothing", counts, err)
			}
		})
	})

	group(t, "LastAttempts", func(t *testing.T) {
		t.Run("TheLastOfEach", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			register := func() *webhooks.Delivery {
				return MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(time.Minute)), e.ID)
			}
			twice, once, never := register(), register(), register()
			MustAttempt(t, s, twice.ID, at(time.Minute), 503, retryAt(at(2*time.Minute)))
			second := NewRecord(MustClaimOne(t, s, twice.ID, at(2*time.Minute)), at(2*time.Minute), 0, retryAt(at(time.Hour)))
			second.Attempt.Error = "timeout: no complete answer within the attempt timeout"
			second.Attempt.Duration = 10 * time.Second
			MustRecord(t, s, second)
			first := NewRecord(MustClaimOne(t, s, once.ID, at(3*time.Minute)), at(3*time.Minute), 200, delivered)
			MustRecord(t, s, first)

			got, err := s.LastAttempts(t.Context(), []string{twice.ID, once.ID, never.ID, webhooks.NewID()})
			if err != nil {
				t.Fatalf("LastAttempts: %v", err)
			}
			if len(got) != 2 {
				t.Fatalf("got %d attempts, want 2 (none for the delivery never attempted, nor for an unknown id)", len(got))
			}
			byDelivery := map[string]*webhooks.Attempt{}
			for _, a := range got {
				byDelivery[a.DeliveryID] = a
			}
			if byDelivery[twice.ID] == nil || byDelivery[once.ID] == nil {
				t.Fatalf("got attempts of %v, want %s and %s", slices.Collect(maps.Keys(byDelivery)), twice.ID, once.ID)
			}
			// Without response bodies.
			first.Attempt.ResponseBody = ""
			checkAttempt(t, byDelivery[twice.ID], second.Attempt)
			checkAttempt(t, byDelivery[once.ID], first.Attempt)
		})

		t.Run("None", func(t *testing.T) {
			s := setup(t, open)
			got, err := s.LastAttempts(t.Context(), nil)
			if err != nil || len(got) != 0 {
				t.Errorf("no deliveries: got %v, %v; want nothing", got, err)
			}
		})
	})
}
