package storetest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// resendFixture is an account with a company, an account endpoint and a
// company endpoint, each with a delivery of one event that failed
// permanently an hour after it was registered at t0.
type resendFixture struct {
	account              *webhooks.Account
	company              *webhooks.Company
	accountEP, companyEP *webhooks.Endpoint
	event                *webhooks.Event
	accountD, companyD   *webhooks.Delivery // failed_permanently
}

func newResendFixture(tb testing.TB, s Store) *resendFixture {
	tb.Helper()
	f := &resendFixture{}
	f.account = MustCreateAccount(tb, s, "")
	f.company = MustCreateCompany(tb, s, f.account.ID)
	f.accountEP = MustCreateEndpoint(tb, s, NewAccountEndpoint(f.account.ID, nil, "*"))
	f.companyEP = MustCreateEndpoint(tb, s, NewCompanyEndpoint(f.company.ID, "*"))
	f.event = NewEvent(tb, "invoice.sent", f.company.ID, t0)
	for _, d := range MustRegisterEvent(tb, s, f.event) {
		switch d.EndpointID {
		case f.accountEP.ID:
			f.accountD = d
		case f.companyEP.ID:
			f.companyD = d
		}
	}
	if f.accountD == nil || f.companyD == nil {
		tb.Fatalf("RegisterEvent: no delivery to one of the endpoints")
	}
	claims := MustClaim(tb, s, at(time.Hour), 10)
	records := make([]*webhooks.AttemptRecord, len(claims))
	for i, c := range claims {
		records[i] = NewRecord(c, at(time.Hour), 410, failedPermanently)
	}
	if err := s.RecordAttempts(tb.Context(), records); err != nil {
		tb.Fatalf("RecordAttempts: %v", err)
	}
	for _, d := range []*(*webhooks.Delivery){&f.accountD, &f.companyD} {
		if *d = MustFindDelivery(tb, s, (*d).ID); (*d).Status != webhooks.DeliveryFailedPermanently {
			tb.Fatalf("fixture delivery %s: status %q, want failed_permanently", (*d).ID, (*d).Status)
		}
	}
	return f
}

func disable(tb testing.TB, s Store, endpointID string, now time.Time) {
	tb.Helper()
	if _, err := updateEndpoint(tb, s, endpointID, &webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointDisabled)}, now); err != nil {
		tb.Fatalf("UpdateEndpoint: %v", err)
	}
}

func enable(tb testing.TB, s Store, endpointID string, now time.Time) {
	tb.Helper()
	if _, err := updateEndpoint(tb, s, endpointID, &webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointEnabled)}, now); err != nil {
		tb.Fatalf("UpdateEndpoint: %v", err)
	}
}

// checkUnchanged reports a delivery whose state moved from before's.
func checkUnchanged(tb testing.TB, s Store, name string, before *webhooks.Delivery) {
	tb.Helper()
	got := MustFindDelivery(tb, s, before.ID)
	checkState(tb, name, got, webhooks.Transition{Status: before.Status, Reason: before.Reason, NextAttemptAt: before.NextAttemptAt}, before.AttemptCount)
	if got.Manual != before.Manual {
		tb.Errorf("%s: manual: got %t, want %t", name, got.Manual, before.Manual)
	}
}

// checkRearmed reports a delivery that is not armed for one manual attempt
// at now.
func checkRearmed(tb testing.TB, name string, got *webhooks.Delivery, now time.Time, attempts int) {
	tb.Helper()
	checkState(tb, name, got, webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: now}, attempts)
	if !got.Manual {
		tb.Errorf("%s: manual: got false, want true", name)
	}
}

func testRetryDelivery(t *testing.T, open func(t *testing.T) Store) {
	group(t, "RetryDelivery", func(t *testing.T) {
		// A retry re-arms the same delivery for one attempt now: an
		// account endpoint keeps exactly one delivery per event.
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			now := at(2 * time.Hour)
			got, err := retryDelivery(t, s, f.accountD.ID, now)
			if err != nil {
				t.Fatalf("RetryDelivery: %v", err)
			}
			if got.ID != f.accountD.ID || got.EventID != f.event.ID || !bytes.Equal(got.Body, f.accountD.Body) {
				t.Errorf("RetryDelivery: got delivery %s of event %s, want %s of %s with its body", got.ID, got.EventID, f.accountD.ID, f.event.ID)
			}
			checkRearmed(t, "returned delivery", got, now, 1)
			stored := MustFindDelivery(t, s, f.accountD.ID)
			checkRearmed(t, "stored delivery", stored, now, 1)
			if len(stored.Attempts) != 1 || stored.LastResponseStatus != 410 {
				t.Errorf("history: got %d attempts, last status %d, want the 1 attempt and 410 kept", len(stored.Attempts), stored.LastResponseStatus)
			}
			checkLastAudit(t, s, f.account.ID, webhooks.AuditDeliveryRetried, webhooks.TargetDelivery, f.accountD.ID, now)

			// The manual attempt is due now; when it fails the delivery
			// ends failed, and can be retried again, still the same one.
			c := MustClaimOne(t, s, f.accountD.ID, now)
			if !c.Delivery.Manual {
				t.Errorf("claimed retry: manual: got false, want true")
			}
			MustRecord(t, s, NewRecord(c, now, 500, manualFailed))
			stored = MustFindDelivery(t, s, f.accountD.ID)
			checkState(t, "after the manual attempt", stored, manualFailed, 2)
			if len(stored.Attempts) != 2 {
				t.Fatalf("attempts: got %d, want 2", len(stored.Attempts))
			}
			if stored.Manual || !stored.Attempts[1].Manual {
				t.Errorf("after the manual attempt: delivery manual %t, attempt manual %t, want false and true", stored.Manual, stored.Attempts[1].Manual)
			}
			later := at(3 * time.Hour)
			if _, err := retryDelivery(t, s, f.accountD.ID, later); err != nil {
				t.Fatalf("RetryDelivery of the failed retry: %v", err)
			}
			checkRearmed(t, "retried twice", MustFindDelivery(t, s, f.accountD.ID), later, 2)
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: f.accountEP.ID, EventID: f.event.ID}); len(ds) != 1 {
				t.Errorf("deliveries of the event: got %d, want 1", len(ds))
			}
		})

		// A delivery that ended failed while its endpoint was off is
		// retried once the endpoint is on again.
		t.Run("EndedByDisable", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			disable(t, s, e.ID, t0)
			d := MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(time.Minute)), e.ID)
			enable(t, s, e.ID, at(time.Hour))
			now := at(2 * time.Hour)
			if _, err := retryDelivery(t, s, d.ID, now); err != nil {
				t.Fatalf("RetryDelivery: %v", err)
			}
			checkRearmed(t, "retried delivery", MustFindDelivery(t, s, d.ID), now, 0)
		})

		t.Run("ErrWrongResend", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			_, err := retryDelivery(t, s, f.companyD.ID, at(2*time.Hour))
			checkCode(t, "RetryDelivery of a company endpoint's delivery", err, webhooks.EWRONGRESEND)
			checkUnchanged(t, s, "company delivery", f.companyD)
		})

		t.Run("ErrNotResendable", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			pending := MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(time.Minute)), e.ID)
			done := MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(2*time.Minute)), e.ID)
			MustAttempt(t, s, done.ID, at(3*time.Minute), 200, delivered)
			scheduled := MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(4*time.Minute)), e.ID)
			MustAttempt(t, s, scheduled.ID, at(5*time.Minute), 503, retryAt(at(time.Hour)))
			for name, id := range map[string]string{"pending": pending.ID, "delivered": done.ID, "scheduled": scheduled.ID} {
				before := MustFindDelivery(t, s, id)
				_, err := retryDelivery(t, s, id, at(10*time.Minute))
				checkCode(t, name, err, webhooks.ENOTRESENDABLE)
				checkUnchanged(t, s, name, before)
			}
		})

		t.Run("ErrOutsideWindow", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			// The event is 30 days old: outside the retry window.
			_, err := retryDelivery(t, s, f.accountD.ID, at(webhooks.RetryWindow))
			checkCode(t, "RetryDelivery 30 days after the event", err, webhooks.EOUTSIDEWINDOW)
			checkUnchanged(t, s, "refused delivery", f.accountD)
			now := at(webhooks.RetryWindow - time.Minute)
			if _, err := retryDelivery(t, s, f.accountD.ID, now); err != nil {
				t.Errorf("RetryDelivery a minute inside the window: %v", err)
			}
		})

		t.Run("ErrEndpointDisabled", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			disable(t, s, f.accountEP.ID, at(90*time.Minute))
			_, err := retryDelivery(t, s, f.accountD.ID, at(2*time.Hour))
			checkCode(t, "RetryDelivery", err, webhooks.EENDPOINTDISABLED)
			checkUnchanged(t, s, "refused delivery", f.accountD)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			_, err := retryDelivery(t, s, webhooks.NewID(), at(2*time.Hour))
			checkCode(t, "unknown delivery", err, webhooks.ENOTFOUND)
			// A deleted endpoint's history stays readable, but nothing is
			// sent to it again.
			if err := deleteEndpoint(t, s, f.accountEP.ID, at(90*time.Minute)); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			_, err = retryDelivery(t, s, f.accountD.ID, at(2*time.Hour))
			checkCode(t, "deleted endpoint's delivery", err, webhooks.ENOTFOUND)
		})
	})
}

func testReplayDelivery(t *testing.T, open func(t *testing.T) Store) {
	group(t, "ReplayDelivery", func(t *testing.T) {
		// A replay is a new delivery with the stored body and the same
		// event id; replay_of names the original, also for a replay of a
		// replay.
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			now := at(2 * time.Hour)
			r, err := replayDelivery(t, s, f.companyD.ID, now)
			if err != nil {
				t.Fatalf("ReplayDelivery: %v", err)
			}
			checkReplay(t, s, r, f.companyD, now)
			checkState(t, "original", MustFindDelivery(t, s, f.companyD.ID), failedPermanently, 1)
			checkLastAudit(t, s, f.account.ID, webhooks.AuditDeliveryReplayed, webhooks.TargetDelivery, r.ID, now)

			// The replay's manual attempt fails; replaying the replay
			// names the original again.
			MustRecord(t, s, NewRecord(MustClaimOne(t, s, r.ID, now), now, 500, manualFailed))
			checkState(t, "failed replay", MustFindDelivery(t, s, r.ID), manualFailed, 1)
			later := at(3 * time.Hour)
			r2, err := replayDelivery(t, s, r.ID, later)
			if err != nil {
				t.Fatalf("ReplayDelivery of the replay: %v", err)
			}
			checkReplay(t, s, r2, f.companyD, later)
			ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: f.companyEP.ID, EventID: f.event.ID})
			if got, want := deliveryIDs(ds), []string{r2.ID, r.ID, f.companyD.ID}; !slices.Equal(got, want) {
				t.Errorf("deliveries of the event: got %v, want %v", got, want)
			}
		})

		t.Run("ErrWrongResend", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			_, err := replayDelivery(t, s, f.accountD.ID, at(2*time.Hour))
			checkCode(t, "ReplayDelivery of an account endpoint's delivery", err, webhooks.EWRONGRESEND)
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: f.accountEP.ID}); len(ds) != 1 {
				t.Errorf("account endpoint's deliveries: got %d, want 1", len(ds))
			}
		})

		t.Run("ErrNotResendable", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			pending := MustRegisterOne(t, s, NewEvent(t, "invoice.sent", c.ID, at(time.Minute)), e.ID)
			done := MustRegisterOne(t, s, NewEvent(t, "invoice.paid", c.ID, at(2*time.Minute)), e.ID)
			MustAttempt(t, s, done.ID, at(3*time.Minute), 200, delivered)
			for name, id := range map[string]string{"pending": pending.ID, "delivered": done.ID} {
				_, err := replayDelivery(t, s, id, at(10*time.Minute))
				checkCode(t, name, err, webhooks.ENOTRESENDABLE)
			}
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != 2 {
				t.Errorf("deliveries: got %d, want 2", len(ds))
			}
		})

		t.Run("ErrOutsideWindow", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			_, err := replayDelivery(t, s, f.companyD.ID, at(webhooks.ReplayWindow))
			checkCode(t, "ReplayDelivery 90 days after the event", err, webhooks.EOUTSIDEWINDOW)
			// Past the retry window, inside the replay window.
			now := at(webhooks.ReplayWindow - day)
			r, err := replayDelivery(t, s, f.companyD.ID, now)
			if err != nil {
				t.Fatalf("ReplayDelivery 89 days after the event: %v", err)
			}
			checkReplay(t, s, r, f.companyD, now)
		})

		t.Run("ErrEndpointDisabled", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			disable(t, s, f.companyEP.ID, at(90*time.Minute))
			_, err := replayDelivery(t, s, f.companyD.ID, at(2*time.Hour))
			checkCode(t, "ReplayDelivery", err, webhooks.EENDPOINTDISABLED)
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: f.companyEP.ID}); len(ds) != 1 {
				t.Errorf("deliveries: got %d, want 1", len(ds))
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			_, err := replayDelivery(t, s, webhooks.NewID(), at(2*time.Hour))
			checkCode(t, "unknown delivery", err, webhooks.ENOTFOUND)
			if err := deleteEndpoint(t, s, f.companyEP.ID, at(90*time.Minute)); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			_, err = replayDelivery(t, s, f.companyD.ID, at(2*time.Hour))
			checkCode(t, "deleted endpoint's delivery", err, webhooks.ENOTFOUND)
		})
	})
}

// checkReplay reports a replay r of original, made at now, that is not a
// new delivery of the same event and body armed for one manual attempt.
func checkReplay(tb testing.TB, s Store, r, original *webhooks.Delivery, now time.Time) {
	tb.Helper()
	for name, d := range map[string]*webhooks.Delivery{"returned replay": r, "stored replay": MustFindDelivery(tb, s, r.ID)} {
		if d.ID == original.ID || !webhooks.ValidID(d.ID) {
			tb.Errorf("%s: id: got %q, want a new one", name, d.ID)
		}
		if d.EndpointID != original.EndpointID || d.EventID != original.EventID || d.EventType != original.EventType || d.ReplayOf != original.ID {
			tb.Errorf("%s: got endpoint %s event %s %s replay_of %q, want %s %s %s %q", name,
				d.EndpointID, d.EventID, d.EventType, d.ReplayOf, original.EndpointID, original.EventID, original.EventType, original.ID)
		}
		// The same bytes: the body is fixed when the original is created.
		if !bytes.Equal(d.Body, original.Body) {
			tb.Errorf("%s: body:\ngot  %s\nwant %s", name, d.Body, original.Body)
		}
		checkRearmed(tb, name, d, now, 0)
		checkTime(tb, name+": created", d.Created, now)
		if d.LastResponseStatus != 0 {
			tb.Errorf("%s: last response status: got %d, want 0", name, d.LastResponseStatus)
		}
	}
}

func testRecover(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Recover", func(t *testing.T) {
		// Recover re-arms every failed delivery created in [since, until)
		// whose event is inside the window, and nothing else.
		t.Run("AccountEndpoint", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			register := func(created time.Time) *webhooks.Delivery {
				return MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, created), e.ID)
			}
			since, until := at(time.Hour), at(5*time.Hour)
			before := register(since.Add(-time.Minute))
			MustFailPermanently(t, s, before.ID, since)
			permanently := register(since)
			MustFailPermanently(t, s, permanently.ID, at(90*time.Minute))
			disable(t, s, e.ID, at(2*time.Hour))
			whileOff := register(at(2*time.Hour + time.Minute))
			enable(t, s, e.ID, at(3*time.Hour))
			done := register(at(3 * time.Hour))
			MustAttempt(t, s, done.ID, at(3*time.Hour), 200, delivered)
			scheduled := register(at(3*time.Hour + time.Minute))
			MustAttempt(t, s, scheduled.ID, at(3*time.Hour+time.Minute), 503, retryAt(at(10*time.Hour)))
			test, err := sendTestEvent(t, s, e.ID, at(4*time.Hour))
			if err != nil {
				t.Fatalf("SendTestEvent: %v", err)
			}
			MustFailPermanently(t, s, test.ID, at(4*time.Hour))
			atUntil := register(until)
			MustFailPermanently(t, s, atUntil.ID, until)

			var unchanged []*webhooks.Delivery
			for _, d := range []*webhooks.Delivery{before, done, scheduled, test, atUntil} {
				unchanged = append(unchanged, MustFindDelivery(t, s, d.ID))
			}
			now := at(6 * time.Hour)
			n, err := recoverRange(t, s, e.ID, since, until, now)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if n != 2 {
				t.Errorf("Recover: got %d, want 2 (failed permanently, failed while off)", n)
			}
			checkRearmed(t, "failed permanently", MustFindDelivery(t, s, permanently.ID), now, 1)
			checkRearmed(t, "failed while off", MustFindDelivery(t, s, whileOff.ID), now, 0)
			for i, name := range []string{"before since", "delivered", "scheduled", "test event", "at until"} {
				checkUnchanged(t, s, name, unchanged[i])
			}
			if ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID}); len(ds) != 7 {
				t.Errorf("deliveries: got %d, want the 7 (retries add none)", len(ds))
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, e.ID, now)

			// What was recovered is pending now: recovering again finds
			// nothing.
			n, err = recoverRange(t, s, e.ID, since, until, now)
			if err != nil || n != 0 {
				t.Errorf("Recover again: got %d (%v), want 0", n, err)
			}
		})

		// Replays on a company endpoint: a delivery that already has a
		// newer delivery of its event is left alone, so each event is
		// sent once more, not once per earlier try.
		t.Run("CompanyEndpoint", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			first := MustRegisterOne(t, s, NewEvent(t, "invoice.created", c.ID, at(time.Hour)), e.ID)
			second := MustRegisterOne(t, s, NewEvent(t, "invoice.sent", c.ID, at(2*time.Hour)), e.ID)
			MustFailPermanently(t, s, first.ID, at(3*time.Hour))
			MustFailPermanently(t, s, second.ID, at(3*time.Hour))
			replay, err := replayDelivery(t, s, second.ID, at(4*time.Hour))
			if err != nil {
				t.Fatalf("ReplayDelivery: %v", err)
			}
			MustRecord(t, s, NewRecord(MustClaimOne(t, s, replay.ID, at(4*time.Hour)), at(4*time.Hour), 500, manualFailed))

			now := at(6 * time.Hour)
			n, err := recoverRange(t, s, e.ID, t0, at(5*time.Hour), now)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if n != 2 {
				t.Errorf("Recover: got %d, want 2", n)
			}
			for _, tc := range []struct {
				name     string
				original *webhooks.Delivery
				want     []string // the event's deliveries before Recover, newest first
			}{
				{"first event", first, []string{first.ID}},
				{"second event", second, []string{replay.ID, second.ID}},
			} {
				ds := MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: e.ID, EventID: tc.original.EventID})
				if len(ds) != len(tc.want)+1 {
					t.Errorf("%s: got %d deliveries, want %d", tc.name, len(ds), len(tc.want)+1)
					continue
				}
				if got := deliveryIDs(ds[1:]); !slices.Equal(got, tc.want) {
					t.Errorf("%s: older deliveries: got %v, want %v", tc.name, got, tc.want)
				}
				checkReplay(t, s, MustFindDelivery(t, s, ds[0].ID), tc.original, now)
			}
			n, err = recoverRange(t, s, e.ID, t0, at(5*time.Hour), now)
			if err != nil || n != 0 {
				t.Errorf("Recover again: got %d (%v), want 0", n, err)
			}
		})

		// Recover uses the action's window: 30 days for a retry, 90 for a
		// replay.
		t.Run("Window", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			recent := NewEvent(t, "invoice.paid", f.company.ID, at(20*day))
			ds := MustRegisterEvent(t, s, recent)
			claims := MustClaim(t, s, at(20*day), 10)
			for _, c := range claims {
				MustRecord(t, s, NewRecord(c, at(20*day), 410, failedPermanently))
			}
			if len(ds) != 2 || len(claims) != 2 {
				t.Fatalf("recent event: got %d deliveries, %d claimed, want 2", len(ds), len(claims))
			}
			now := at(31 * day)
			for _, tc := range []struct {
				name string
				ep   *webhooks.Endpoint
				want int
			}{{"account endpoint", f.accountEP, 1}, {"company endpoint", f.companyEP, 2}} {
				n, err := recoverRange(t, s, tc.ep.ID, t0, now, now)
				if err != nil {
					t.Fatalf("%s: Recover: %v", tc.name, err)
				}
				if n != tc.want {
					t.Errorf("%s: Recover: got %d, want %d", tc.name, n, tc.want)
				}
			}
			checkUnchanged(t, s, "account delivery of the 31-day-old event", f.accountD)
		})

		t.Run("ErrEndpointDisabled", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			disable(t, s, f.accountEP.ID, at(90*time.Minute))
			_, err := recoverRange(t, s, f.accountEP.ID, t0, at(2*time.Hour), at(2*time.Hour))
			checkCode(t, "Recover", err, webhooks.EENDPOINTDISABLED)
			checkState(t, "delivery", MustFindDelivery(t, s, f.accountD.ID), failedPermanently, 1)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			f := newResendFixture(t, s)
			_, err := recoverRange(t, s, webhooks.NewID(), t0, at(2*time.Hour), at(2*time.Hour))
			checkCode(t, "unknown endpoint", err, webhooks.ENOTFOUND)
			if err := deleteEndpoint(t, s, f.companyEP.ID, at(90*time.Minute)); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			_, err = recoverRange(t, s, f.companyEP.ID, t0, at(2*time.Hour), at(2*time.Hour))
			checkCode(t, "deleted endpoint", err, webhooks.ENOTFOUND)
		})
	})
}
