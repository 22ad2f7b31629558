package storetest

import (
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// queue makes endpoints and due deliveries to them.
type queue struct {
	s Store
}

func newQueue(s Store) *queue { return &queue{s: s} }

// endpoint creates an account endpoint that takes every event, of an
// account of its own, so that each event reaches one endpoint.
func (q *queue) endpoint(tb testing.TB) *webhooks.Endpoint {
	tb.Helper()
	a := MustCreateAccount(tb, q.s, "")
	return MustCreateEndpoint(tb, q.s, NewAccountEndpoint(a.ID, nil, "*"))
}

// add registers an event at due and returns its delivery to ep, due then.
func (q *queue) add(tb testing.TB, ep *webhooks.Endpoint, due time.Time) *webhooks.Delivery {
	tb.Helper()
	ds := MustRegisterEvent(tb, q.s, NewAccountEvent(tb, "account.updated", ep.AccountID, due))
	if len(ds) != 1 || ds[0].EndpointID != ep.ID {
		tb.Fatalf("RegisterEvent: got deliveries to %v, want one to %s", deliveryEndpoints(ds), ep.ID)
	}
	return ds[0]
}

func (q *queue) claim(tb testing.TB, r webhooks.ClaimRequest) []*webhooks.Claim {
	tb.Helper()
	if r.Token == "" {
		r.Token = webhooks.NewID()
	}
	if r.LeaseUntil.IsZero() {
		r.LeaseUntil = r.Now.Add(time.Minute)
	}
	return MustClaimRequest(tb, q.s, r)
}

// checkClaims reports claims that are not of want, in order.
func checkClaims(tb testing.TB, name string, got []*webhooks.Claim, want ...*webhooks.Delivery) {
	tb.Helper()
	if g, w := claimIDs(got), deliveryIDs(want); !slices.Equal(g, w) {
		tb.Errorf("%s: claimed %v, want %v", name, g, w)
	}
}

// checkClaimsAnyOrder reports claims that are not of want, in any order.
func checkClaimsAnyOrder(tb testing.TB, name string, got []*webhooks.Claim, want ...*webhooks.Delivery) {
	tb.Helper()
	g, w := claimIDs(got), deliveryIDs(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		tb.Errorf("%s: claimed %v, want %v", name, g, w)
	}
}

func testClaims(t *testing.T, open func(t *testing.T) Store) {
	group(t, "ClaimDeliveries", func(t *testing.T) {
		// Due pending deliveries, oldest due first, whatever order they
		// were created in, each with what its attempt needs.
		t.Run("OldestDueFirst", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e, other := q.endpoint(t), q.endpoint(t)
			third := q.add(t, e, at(3*time.Second))
			first := q.add(t, other, at(time.Second))
			second := q.add(t, e, at(2*time.Second))
			q.add(t, e, at(2*time.Minute)) // not yet due
			now := at(time.Minute)
			token := webhooks.NewID()
			claims := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, Token: token, LeaseUntil: now.Add(30 * time.Second)})
			checkClaims(t, "claim", claims, first, second, third)
			for _, c := range claims {
				ep := map[string]*webhooks.Endpoint{e.ID: e, other.ID: other}[c.Delivery.EndpointID]
				if c.Endpoint == nil || c.Endpoint.ID != ep.ID || c.Endpoint.Scope != ep.Scope || c.Endpoint.URL != ep.URL ||
					c.Endpoint.Secret != ep.Secret || !slices.Equal(c.Endpoint.SigningSecrets(now), []string{ep.Secret}) {
					t.Errorf("claim of %s: endpoint: got %+v, want %s with its URL and secret", c.Delivery.ID, c.Endpoint, ep.ID)
				}
				d := MustFindDelivery(t, s, c.Delivery.ID)
				if c.Delivery.EventID != d.EventID || string(c.Delivery.Body) != string(d.Body) || c.Delivery.Relationship != webhooks.RelationshipOwn {
					t.Errorf("claim of %s: delivery: got event %s body %s relationship %q, want %s %s own",
						c.Delivery.ID, c.Delivery.EventID, c.Delivery.Body, c.Delivery.Relationship, d.EventID, d.Body)
				}
				checkState(t, "claimed delivery", c.Delivery, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: d.NextAttemptAt}, 0)
				// A claim changes no state the API shows.
				checkState(t, "stored claimed delivery", d, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: d.Created}, 0)
			}
		})

		t.Run("Limit", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			var ds []*webhooks.Delivery
			for i := range 5 {
				ds = append(ds, q.add(t, e, at(time.Duration(i)*time.Second)))
			}
			now := at(time.Minute)
			checkClaims(t, "first claim", q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 2}), ds[0], ds[1])
			checkClaims(t, "second claim", q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 2}), ds[2], ds[3])
			checkClaims(t, "third claim", q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 2}), ds[4])
			checkClaims(t, "fourth claim", q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 2}))
		})

		// Only pending deliveries that are due: not one scheduled later,
		// delivered, failed, or failed permanently.
		t.Run("OnlyDue", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e, off := q.endpoint(t), q.endpoint(t)
			due := q.add(t, e, t0)
			done := q.add(t, e, t0)
			MustAttempt(t, s, done.ID, t0, 200, delivered)
			dead := q.add(t, e, t0)
			MustFailPermanently(t, s, dead.ID, t0)
			later := q.add(t, e, t0)
			MustAttempt(t, s, later.ID, t0, 503, retryAt(at(time.Hour)))
			disable(t, s, off.ID, t0)
			q.add(t, off, t0)

			checkClaims(t, "claim before the retry is due", q.claim(t, webhooks.ClaimRequest{Now: at(time.Hour - time.Millisecond), Limit: 10}), due)
			checkClaims(t, "claim when the retry is due", q.claim(t, webhooks.ClaimRequest{Now: at(time.Hour), Limit: 10}), later)
		})

		// A claim holds its deliveries until LeaseUntil; after that the
		// claim has lapsed (its worker died) and another worker takes them.
		t.Run("Lease", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			d := q.add(t, e, t0)
			now := at(time.Minute)
			lapsed := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, LeaseUntil: now.Add(30 * time.Second)})
			checkClaims(t, "first claim", lapsed, d)
			checkClaims(t, "claim during the lease", q.claim(t, webhooks.ClaimRequest{Now: now.Add(29 * time.Second), Limit: 10}))
			checkClaims(t, "claim after the lease", q.claim(t, webhooks.ClaimRequest{Now: now.Add(31 * time.Second), Limit: 10}), d)
		})

		// Records handed with a claim are stored first, in its transaction:
		// the claims they end free their endpoint's slots for that claim.
		t.Run("Records", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			a := q.endpoint(t)
			d1, d2 := q.add(t, a, t0), q.add(t, a, at(time.Second))
			now := at(time.Minute)
			first := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, PerEndpoint: 1})
			checkClaims(t, "first claim", first, d1)
			rec := NewRecord(first[0], now, 200, delivered)
			second := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, PerEndpoint: 1, Records: []*webhooks.AttemptRecord{rec}})
			checkClaims(t, "claim with the first attempt's record", second, d2)
			if got := MustFindDelivery(t, s, d1.ID); got.Status != webhooks.DeliveryDelivered || len(got.Attempts) != 1 {
				t.Errorf("recorded delivery: status %s with %d attempts, want delivered with 1", got.Status, len(got.Attempts))
			}
			// Records alone, with no claim asked for.
			rec2 := NewRecord(second[0], now, 200, delivered)
			checkClaims(t, "records only", q.claim(t, webhooks.ClaimRequest{Now: now, Records: []*webhooks.AttemptRecord{rec2}}))
			if got := MustFindDelivery(t, s, d2.ID); got.Status != webhooks.DeliveryDelivered {
				t.Errorf("second delivery: status %s, want delivered", got.Status)
			}
		})

		// PerEndpoint caps the unexpired claims of an endpoint, counting
		// those every worker holds.
		t.Run("PerEndpoint", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			a, b := q.endpoint(t), q.endpoint(t)
			var as []*webhooks.Delivery
			for i := range 5 {
				as = append(as, q.add(t, a, at(time.Duration(i)*time.Second)))
			}
			db := q.add(t, b, at(10*time.Second))
			now := at(time.Minute)
			first := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, PerEndpoint: 2, LeaseUntil: now.Add(time.Minute)})
			checkClaims(t, "first claim", first, as[0], as[1], db)
			// a holds 2 claims already, b has nothing else due.
			checkClaims(t, "second claim", q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, PerEndpoint: 2}))
			// A recorded attempt ends its claim: a has room for one more.
			MustRecord(t, s, NewRecord(first[0], now, 503, retryAt(at(time.Hour))))
			third := q.claim(t, webhooks.ClaimRequest{Now: now.Add(time.Second), Limit: 10, PerEndpoint: 2, LeaseUntil: now.Add(90 * time.Second)})
			checkClaims(t, "claim after an attempt", third, as[2])
			// The first claim lapses: its deliveries count no more, the
			// third claim's still does.
			after := now.Add(time.Minute)
			checkClaims(t, "claim after the first claim lapsed", q.claim(t, webhooks.ClaimRequest{Now: after, Limit: 10, PerEndpoint: 2}), as[1], db)
			// Without a cap, everything due.
			checkClaims(t, "claim without a cap", q.claim(t, webhooks.ClaimRequest{Now: after, Limit: 10}), as[3], as[4])
		})

		// A deep backlog on one endpoint must not keep another endpoint's
		// due delivery out of a batch that has room for it.
		t.Run("PerEndpointBacklog", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			a, b := q.endpoint(t), q.endpoint(t)
			var as []*webhooks.Delivery
			for i := range 12 {
				as = append(as, q.add(t, a, at(time.Duration(i)*time.Second)))
			}
			db := q.add(t, b, at(time.Minute))
			claims := q.claim(t, webhooks.ClaimRequest{Now: at(time.Hour), Limit: 3, PerEndpoint: 2})
			checkClaims(t, "claim", claims, as[0], as[1], db)
		})

		// The endpoint of a claim is the endpoint at attempt time: its URL
		// and secrets now, not when the delivery was created.
		t.Run("EndpointAtAttemptTime", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			d := q.add(t, e, t0)
			url := "https://moved.example.com/hooks"
			if _, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{URL: &url}, at(time.Second)); err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			rot, err := rotateSecret(t, s, e.ID, at(time.Hour), at(time.Second))
			if err != nil {
				t.Fatalf("RotateSecret: %v", err)
			}
			secret := rot.Secret
			claims := q.claim(t, webhooks.ClaimRequest{Now: at(time.Minute), Limit: 10})
			checkClaims(t, "claim", claims, d)
			if len(claims) == 1 {
				ep := claims[0].Endpoint
				if ep.URL != url || !slices.Equal(ep.SigningSecrets(at(time.Minute)), []string{secret, e.Secret}) {
					t.Errorf("claimed endpoint: got %s with %d secrets, want %s with the new and the old secret", ep.URL, len(ep.SigningSecrets(at(time.Minute))), url)
				}
			}
		})
	})

	group(t, "ReleaseClaims", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			d1, d2 := q.add(t, e, t0), q.add(t, e, at(time.Second))
			now := at(time.Minute)
			claims := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, LeaseUntil: now.Add(time.Hour)})
			checkClaims(t, "claim", claims, d1, d2)
			// Another token cannot release them.
			if err := s.ReleaseClaims(t.Context(), webhooks.NewID(), []string{d1.ID, d2.ID}); err != nil {
				t.Fatalf("ReleaseClaims: %v", err)
			}
			checkClaims(t, "claim after a release by another token", q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10}))
			if err := s.ReleaseClaims(t.Context(), claims[0].Token, []string{d2.ID}); err != nil {
				t.Fatalf("ReleaseClaims: %v", err)
			}
			// Released, they are claimable at once.
			checkClaims(t, "claim after the release", q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10}), d2)
			checkState(t, "released delivery", MustFindDelivery(t, s, d2.ID), webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: d2.NextAttemptAt}, 0)
			if err := s.ReleaseClaims(t.Context(), claims[0].Token, nil); err != nil {
				t.Errorf("ReleaseClaims of nothing: %v", err)
			}
		})
	})

	group(t, "NextScheduled", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			next, err := s.NextScheduled(t.Context(), t0)
			if err != nil || !next.IsZero() {
				t.Errorf("NextScheduled of an empty store: got %s (%v), want the zero time", next, err)
			}
			q := newQueue(s)
			e := q.endpoint(t)
			q.add(t, e, t0) // due at t0, so never after now below
			done := q.add(t, e, t0)
			MustAttempt(t, s, done.ID, t0, 200, delivered)
			soon, later := q.add(t, e, t0), q.add(t, e, t0)
			MustAttempt(t, s, later.ID, t0, 503, retryAt(at(2*time.Hour)))
			MustAttempt(t, s, soon.ID, t0, 503, retryAt(at(time.Hour)))
			for _, tc := range []struct {
				now  time.Time
				want time.Time
			}{
				// The due delivery is not after now: only the scheduled ones.
				{at(time.Minute), at(time.Hour)},
				{at(time.Hour), at(2 * time.Hour)},
				{at(2 * time.Hour), time.Time{}},
			} {
				got, err := s.NextScheduled(t.Context(), tc.now)
				if err != nil {
					t.Fatalf("NextScheduled: %v", err)
				}
				checkTime(t, "NextScheduled at "+tc.now.Format(time.TimeOnly), got, tc.want)
			}
		})
	})
}

func testRecordAttempts(t *testing.T, open func(t *testing.T) Store) {
	group(t, "RecordAttempts", func(t *testing.T) {
		t.Run("Transitions", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			retry, ok, rejected, dead := q.add(t, e, t0), q.add(t, e, t0), q.add(t, e, t0), q.add(t, e, t0)
			now := at(time.Minute)
			claims := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10})
			want := map[string]struct {
				status int
				t      webhooks.Transition
			}{
				retry.ID:    {503, retryAt(at(time.Hour))},
				ok.ID:       {204, delivered},
				rejected.ID: {410, failedPermanently},
				dead.ID:     {0, webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonScheduleExhausted}},
			}
			var records []*webhooks.AttemptRecord
			for _, c := range claims {
				w := want[c.Delivery.ID]
				records = append(records, NewRecord(c, now, w.status, w.t))
			}
			if err := s.RecordAttempts(t.Context(), records); err != nil {
				t.Fatalf("RecordAttempts: %v", err)
			}
			for _, r := range records {
				w := want[r.Attempt.DeliveryID]
				d := MustFindDelivery(t, s, r.Attempt.DeliveryID)
				checkState(t, "delivery", d, w.t, 1)
				if d.LastResponseStatus != w.status || d.Manual {
					t.Errorf("delivery: last response status %d manual %t, want %d false", d.LastResponseStatus, d.Manual, w.status)
				}
				if len(d.Attempts) != 1 {
					t.Errorf("attempts: got %d, want 1", len(d.Attempts))
					continue
				}
				checkAttempt(t, d.Attempts[0], r.Attempt)
			}
			// The claims ended with their records: the retry is claimable
			// when due, by anyone.
			checkClaims(t, "claim before the retry is due", q.claim(t, webhooks.ClaimRequest{Now: now.Add(time.Second), Limit: 10}))
			checkClaims(t, "claim when the retry is due", q.claim(t, webhooks.ClaimRequest{Now: at(time.Hour), Limit: 10}), retry)
		})

		// A record whose token the delivery no longer holds is dropped: the
		// claim lapsed and another worker took the delivery.
		t.Run("LapsedClaim", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			d := q.add(t, e, t0)
			now := at(time.Minute)
			old := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10, LeaseUntil: now.Add(time.Minute)})
			current := q.claim(t, webhooks.ClaimRequest{Now: now.Add(2 * time.Minute), Limit: 10, LeaseUntil: now.Add(3 * time.Minute)})
			checkClaims(t, "first claim", old, d)
			checkClaims(t, "claim after the lapse", current, d)
			if len(old) != 1 || len(current) != 1 {
				t.FailNow()
			}
			MustRecord(t, s, NewRecord(old[0], now, 200, delivered))
			got := MustFindDelivery(t, s, d.ID)
			checkState(t, "after the stale record", got, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: t0}, 0)
			if len(got.Attempts) != 0 {
				t.Errorf("attempts after the stale record: got %d, want 0", len(got.Attempts))
			}
			// The current claim still holds it.
			checkClaims(t, "claim during the current lease", q.claim(t, webhooks.ClaimRequest{Now: now.Add(2 * time.Minute), Limit: 10}))
			MustRecord(t, s, NewRecord(current[0], now.Add(2*time.Minute), 200, delivered))
			got = MustFindDelivery(t, s, d.ID)
			checkState(t, "after the current record", got, delivered, 1)
			if len(got.Attempts) != 1 {
				t.Errorf("attempts: got %d, want 1", len(got.Attempts))
			}
		})

		// Recording the same claim twice (a retried call) adds nothing.
		t.Run("Twice", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			d := q.add(t, e, t0)
			c := MustClaimOne(t, s, d.ID, at(time.Minute))
			r := NewRecord(c, at(time.Minute), 503, retryAt(at(time.Hour)))
			MustRecord(t, s, r)
			MustRecord(t, s, r)
			got := MustFindDelivery(t, s, d.ID)
			checkState(t, "delivery", got, retryAt(at(time.Hour)), 1)
			if len(got.Attempts) != 1 {
				t.Errorf("attempts: got %d, want 1", len(got.Attempts))
			}
		})

		// The endpoint was disabled or deleted during the attempt: its
		// delivery already ended failed, and only a success changes that.
		t.Run("EndpointOffDuringAttempt", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			disabledEP, deletedEP := q.endpoint(t), q.endpoint(t)
			failedD, deliveredD := q.add(t, disabledEP, t0), q.add(t, disabledEP, t0)
			deletedD := q.add(t, deletedEP, t0)
			now := at(time.Minute)
			claims := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 10})
			checkClaimsAnyOrder(t, "claim", claims, failedD, deliveredD, deletedD)
			disable(t, s, disabledEP.ID, now.Add(time.Second))
			if err := deleteEndpoint(t, s, deletedEP.ID, now.Add(time.Second)); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			want := map[string]struct {
				status int
				record webhooks.Transition
				after  webhooks.Transition
			}{
				failedD.ID:    {503, retryAt(at(time.Hour)), webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDisabled}},
				deliveredD.ID: {200, delivered, delivered},
				deletedD.ID:   {410, failedPermanently, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDeleted}},
			}
			var records []*webhooks.AttemptRecord
			for _, c := range claims {
				w := want[c.Delivery.ID]
				records = append(records, NewRecord(c, now, w.status, w.record))
			}
			if err := s.RecordAttempts(t.Context(), records); err != nil {
				t.Fatalf("RecordAttempts: %v", err)
			}
			for _, r := range records {
				w := want[r.Attempt.DeliveryID]
				d := MustFindDelivery(t, s, r.Attempt.DeliveryID)
				// The attempt was made: the history keeps it.
				checkState(t, "delivery", d, w.after, 1)
				if len(d.Attempts) != 1 || d.LastResponseStatus != w.status {
					t.Errorf("delivery: got %d attempts, last status %d, want 1 and %d", len(d.Attempts), d.LastResponseStatus, w.status)
				}
			}
			checkClaims(t, "claim after the records", q.claim(t, webhooks.ClaimRequest{Now: at(2 * time.Hour), Limit: 10}))
		})

		t.Run("Nothing", func(t *testing.T) {
			s := setup(t, open)
			if err := s.RecordAttempts(t.Context(), nil); err != nil {
				t.Errorf("RecordAttempts of nothing: %v", err)
			}
		})
	})
}
