package storetest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// checkEndpoint reports the fields of got that differ from want's.
func checkEndpoint(tb testing.TB, name string, got, want *webhooks.Endpoint) {
	tb.Helper()
	if got.ID != want.ID || got.Scope != want.Scope || got.CompanyID != want.CompanyID || got.AccountID != want.AccountID {
		tb.Errorf("%s: got %s %s company %q account %q, want %s %s company %q account %q", name,
			got.ID, got.Scope, got.CompanyID, got.AccountID, want.ID, want.Scope, want.CompanyID, want.AccountID)
	}
	if got.URL != want.URL {
		tb.Errorf("%s: url: got %q, want %q", name, got.URL, want.URL)
	}
	if !slices.Equal(got.EnabledEvents, want.EnabledEvents) {
		tb.Errorf("%s: enabled_events: got %q, want %q", name, got.EnabledEvents, want.EnabledEvents)
	}
	// A company endpoint has no relationships: nil and empty are the same.
	if len(got.Relationships) != 0 || len(want.Relationships) != 0 {
		if !slices.Equal(got.Relationships, want.Relationships) {
			tb.Errorf("%s: relationships: got %q, want %q", name, got.Relationships, want.Relationships)
		}
	}
	if got.APIVersion != want.APIVersion || got.Livemode != want.Livemode || got.Description != want.Description || got.Status != want.Status {
		tb.Errorf("%s: got version %s livemode %t description %q status %s, want version %s livemode %t description %q status %s", name,
			got.APIVersion, got.Livemode, got.Description, got.Status, want.APIVersion, want.Livemode, want.Description, want.Status)
	}
	if got.Secret != want.Secret || got.PreviousSecret != want.PreviousSecret {
		tb.Errorf("%s: secrets differ: got current %q previous %q, want %q and %q", name,
			got.Secret, got.PreviousSecret, want.Secret, want.PreviousSecret)
	}
	checkTime(tb, name+": previous secret expires", got.PreviousSecretExpires, want.PreviousSecretExpires)
	checkTime(tb, name+": created", got.Created, want.Created)
	checkTime(tb, name+": updated", got.Updated, want.Updated)
}

func testEndpoints(t *testing.T, open func(t *testing.T) Store) {
	group(t, "CreateEndpoint", func(t *testing.T) {
		t.Run("CompanyScope", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := NewCompanyEndpoint(c.ID, "invoice.*", "customer.created")
			e.Description, e.APIVersion, e.Created = "ERP", webhooks.APIVersion20250601, at(time.Minute)
			MustCreateEndpoint(t, s, e)
			checkEndpoint(t, "FindEndpoint", MustFindEndpoint(t, s, e.ID), e)
			// A company endpoint's changes are the company owner's.
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, e.ID, e.Created)
		})

		t.Run("AccountScope", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			own := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, []webhooks.Relationship{webhooks.RelationshipOwn}, "*"))
			e := NewAccountEndpoint(a.ID, nil, "account.*", "invoice.sent")
			e.Livemode = false
			e.URL = "http://localhost:8080/hooks"
			both := MustCreateEndpoint(t, s, e)
			checkEndpoint(t, "own only", MustFindEndpoint(t, s, own.ID), own)
			checkEndpoint(t, "default relationships", MustFindEndpoint(t, s, both.ID), both)
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointCreated, webhooks.TargetEndpoint, both.ID, both.Created)
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			for name, e := range map[string]*webhooks.Endpoint{
				"unknown company": NewCompanyEndpoint(webhooks.NewID(), "*"),
				"unknown account": NewAccountEndpoint(webhooks.NewID(), nil, "*"),
			} {
				oe, err := createEndpoint(t, s, e)
				checkCode(t, name, err, webhooks.ENOTFOUND)
				if oe != nil {
					t.Errorf("%s: got endpoint %s, want none", name, oe.ID)
				}
			}
		})
	})

	group(t, "FindEndpoint", func(t *testing.T) {
		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := s.FindEndpoint(t.Context(), webhooks.NewID())
			checkCode(t, "FindEndpoint", err, webhooks.ENOTFOUND)
		})
	})

	group(t, "ListEndpoints", func(t *testing.T) {
		t.Run("Pagination", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			var want []string
			for i := range 5 {
				e := NewAccountEndpoint(a.ID, nil, "*")
				e.Created = at(time.Duration(i) * time.Second)
				want = append([]string{MustCreateEndpoint(t, s, e).ID}, want...)
			}
			// The account's list holds its account endpoints only, not its
			// companies'.
			MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			checkList(t, func(p webhooks.Page) (*webhooks.List[*webhooks.Endpoint], error) {
				return s.ListEndpoints(t.Context(), webhooks.EndpointFilter{AccountID: a.ID}, p)
			}, endpointID, want)
		})

		t.Run("Scopes", func(t *testing.T) {
			s := setup(t, open)
			a, b := MustCreateAccount(t, s, ""), MustCreateAccount(t, s, "")
			c, c2 := MustCreateCompany(t, s, a.ID), MustCreateCompany(t, s, a.ID)
			e1 := NewCompanyEndpoint(c.ID, "*")
			e1.Created = at(time.Second)
			e2 := NewCompanyEndpoint(c.ID, "invoice.*")
			e2.Created = at(2 * time.Second)
			MustCreateEndpoint(t, s, e1)
			MustCreateEndpoint(t, s, e2)
			other := MustCreateEndpoint(t, s, NewCompanyEndpoint(c2.ID, "*"))
			deleted := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			if err := deleteEndpoint(t, s, deleted.ID, at(time.Hour)); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			acc := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			MustCreateEndpoint(t, s, NewAccountEndpoint(b.ID, nil, "*"))
			for _, tc := range []struct {
				name string
				f    webhooks.EndpointFilter
				want []string
			}{
				{"company", webhooks.EndpointFilter{CompanyID: c.ID}, []string{e2.ID, e1.ID}},
				{"other company", webhooks.EndpointFilter{CompanyID: c2.ID}, []string{other.ID}},
				{"account", webhooks.EndpointFilter{AccountID: a.ID}, []string{acc.ID}},
				{"unknown company", webhooks.EndpointFilter{CompanyID: webhooks.NewID()}, []string{}},
			} {
				l, err := s.ListEndpoints(t.Context(), tc.f, webhooks.Page{Limit: 10})
				if err != nil {
					t.Fatalf("%s: ListEndpoints: %v", tc.name, err)
				}
				if got := mapIDs(l.Data, endpointID); !slices.Equal(got, tc.want) || l.HasMore {
					t.Errorf("%s: got %v has_more %t, want %v", tc.name, got, l.HasMore, tc.want)
				}
				// Listed endpoints are whole (a list never shows the
				// secret, but the API drops it, not the store).
				for _, e := range l.Data {
					if e.ID == e1.ID {
						checkEndpoint(t, "listed", e, e1)
					}
				}
			}
		})
	})

	group(t, "UpdateEndpoint", func(t *testing.T) {
		t.Run("Fields", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			now := at(time.Hour)
			u := &webhooks.EndpointUpdate{
				URL:           ptr("https://erp.example.com/new"),
				EnabledEvents: &[]string{"invoice.sent", "account.*"},
				Relationships: &[]webhooks.Relationship{webhooks.RelationshipManaged},
				APIVersion:    ptr(webhooks.APIVersion20250601),
				Description:   ptr("New ERP"),
			}
			got, err := updateEndpoint(t, s, e.ID, u, now)
			if err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			want := *e
			want.URL, want.EnabledEvents, want.Relationships = *u.URL, *u.EnabledEvents, *u.Relationships
			want.APIVersion, want.Description, want.Updated = *u.APIVersion, *u.Description, now
			checkEndpoint(t, "UpdateEndpoint", got, &want)
			checkEndpoint(t, "FindEndpoint", MustFindEndpoint(t, s, e.ID), &want)
			entries := MustListAudit(t, s, a.ID)
			if len(entries) != 2 {
				t.Fatalf("audit: got %d entries, want 2 (created, updated)", len(entries))
			}
			checkAudit(t, entries[0], a.ID, webhooks.AuditEndpointUpdated, webhooks.TargetEndpoint, e.ID, now)
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "invoice.*"))
			for name, u := range map[string]*webhooks.EndpointUpdate{
				"no events":                  {URL: ptr("https://changed.example.com"), EnabledEvents: &[]string{}},
				"account events":             {Description: ptr("changed"), EnabledEvents: &[]string{"account.updated"}},
				"relationships on a company": {Relationships: &[]webhooks.Relationship{webhooks.RelationshipOwn}},
				"unknown version":            {APIVersion: ptr("1999-01-01")},
				"unknown status":             {Status: ptr("paused"), URL: ptr("https://changed.example.com")},
			} {
				_, err := updateEndpoint(t, s, e.ID, u, at(time.Hour))
				checkCode(t, name, err, webhooks.EINVALID)
				// A refused update changes nothing, not even the fields
				// that were valid.
				checkEndpoint(t, name+": after", MustFindEndpoint(t, s, e.ID), e)
			}
			// Each refusal is in the audit log, with its code.
			got := MustListAudit(t, s, a.ID)
			if len(got) != 6 {
				t.Fatalf("audit: got %d entries, want the creation and 5 refused updates", len(got))
			}
			for _, e := range got[:5] {
				if e.Action != webhooks.AuditEndpointUpdated || e.Outcome != webhooks.AuditRefused || e.ErrorCode != webhooks.EINVALID {
					t.Errorf("audit entry: got %s %s %s, want %s refused %s", e.Action, e.Outcome, e.ErrorCode, webhooks.AuditEndpointUpdated, webhooks.EINVALID)
				}
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := updateEndpoint(t, s, webhooks.NewID(), &webhooks.EndpointUpdate{Description: ptr("x")}, t0)
			checkCode(t, "UpdateEndpoint", err, webhooks.ENOTFOUND)
		})

		t.Run("Disable", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			other := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			due := MustRegisterOne(t, s, NewEvent(t, "invoice.created", c.ID, at(time.Minute)), e.ID)
			scheduled := MustRegisterOne(t, s, NewEvent(t, "invoice.sent", c.ID, at(2*time.Minute)), e.ID)
			done := MustRegisterOne(t, s, NewEvent(t, "invoice.paid", c.ID, at(3*time.Minute)), e.ID)
			MustAttempt(t, s, scheduled.ID, at(5*time.Minute), 503, retryAt(at(time.Hour)))
			MustAttempt(t, s, done.ID, at(5*time.Minute), 200, delivered)

			now := at(10 * time.Minute)
			got, err := updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointDisabled)}, now)
			if err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			if got.Status != webhooks.EndpointDisabled || got.Enabled() {
				t.Errorf("status: got %q, want %q", got.Status, webhooks.EndpointDisabled)
			}
			ended := webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDisabled}
			checkState(t, "due delivery", MustFindDelivery(t, s, due.ID), ended, 0)
			checkState(t, "scheduled delivery", MustFindDelivery(t, s, scheduled.ID), ended, 1)
			checkState(t, "delivered delivery", MustFindDelivery(t, s, done.ID), delivered, 1)
			// The other endpoint's deliveries are not touched.
			for _, d := range MustListDeliveries(t, s, webhooks.DeliveryFilter{EndpointID: other.ID}) {
				if d.Status != webhooks.DeliveryPending {
					t.Errorf("other endpoint's delivery: status: got %q, want %q", d.Status, webhooks.DeliveryPending)
				}
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointDisabled, webhooks.TargetEndpoint, e.ID, now)
			if claims := MustClaim(t, s, at(2*time.Hour), 10); len(claims) != 3 {
				t.Errorf("claims after disabling: got %d, want the other endpoint's 3", len(claims))
			}

			// Enabling it again brings nothing back by itself: that is
			// what Recover is for.
			later := at(20 * time.Minute)
			got, err = updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{Status: ptr(webhooks.EndpointEnabled)}, later)
			if err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			if got.Status != webhooks.EndpointEnabled {
				t.Errorf("status: got %q, want %q", got.Status, webhooks.EndpointEnabled)
			}
			checkState(t, "due delivery after enabling", MustFindDelivery(t, s, due.ID), ended, 0)
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointEnabled, webhooks.TargetEndpoint, e.ID, later)
		})

		t.Run("ChangeAndDisable", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			now := at(time.Hour)
			u := &webhooks.EndpointUpdate{Description: ptr("off for maintenance"), Status: ptr(webhooks.EndpointDisabled)}
			if _, err := updateEndpoint(t, s, e.ID, u, now); err != nil {
				t.Fatalf("UpdateEndpoint: %v", err)
			}
			// One entry per action, both at now; their order is free.
			entries := MustListAudit(t, s, a.ID)
			var actions []string
			for _, en := range entries[:min(2, len(entries))] {
				actions = append(actions, en.Action)
				checkAudit(t, en, a.ID, en.Action, webhooks.TargetEndpoint, e.ID, now)
			}
			slices.Sort(actions)
			if want := []string{webhooks.AuditEndpointDisabled, webhooks.AuditEndpointUpdated}; len(entries) != 3 || !slices.Equal(actions, want) {
				t.Errorf("audit: got %d entries, newest two %v, want 3, newest two %v", len(entries), actions, want)
			}
		})
	})

	group(t, "DeleteEndpoint", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			pending := MustRegisterOne(t, s, NewEvent(t, "invoice.created", c.ID, at(time.Minute)), e.ID)
			done := MustRegisterOne(t, s, NewEvent(t, "invoice.sent", c.ID, at(2*time.Minute)), e.ID)
			MustAttempt(t, s, done.ID, at(3*time.Minute), 204, delivered)

			now := at(time.Hour)
			if err := deleteEndpoint(t, s, e.ID, now); err != nil {
				t.Fatalf("DeleteEndpoint: %v", err)
			}
			_, err := s.FindEndpoint(t.Context(), e.ID)
			checkCode(t, "FindEndpoint of a deleted endpoint", err, webhooks.ENOTFOUND)
			// The history is kept.
			checkState(t, "pending delivery", MustFindDelivery(t, s, pending.ID),
				webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDeleted}, 0)
			d := MustFindDelivery(t, s, done.ID)
			checkState(t, "delivered delivery", d, delivered, 1)
			if len(d.Attempts) != 1 {
				t.Errorf("delivered delivery: attempts: got %d, want 1", len(d.Attempts))
			}
			l, err := s.ListEndpoints(t.Context(), webhooks.EndpointFilter{CompanyID: c.ID}, webhooks.Page{Limit: 10})
			if err != nil {
				t.Fatalf("ListEndpoints: %v", err)
			}
			if len(l.Data) != 0 {
				t.Errorf("ListEndpoints: got %v, want none", mapIDs(l.Data, endpointID))
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointDeleted, webhooks.TargetEndpoint, e.ID, now)

			// A deleted endpoint is gone for every change, and gets no
			// new deliveries.
			checkCode(t, "DeleteEndpoint again", deleteEndpoint(t, s, e.ID, now), webhooks.ENOTFOUND)
			_, err = updateEndpoint(t, s, e.ID, &webhooks.EndpointUpdate{Description: ptr("x")}, now)
			checkCode(t, "UpdateEndpoint of a deleted endpoint", err, webhooks.ENOTFOUND)
			_, err = rotateSecret(t, s, e.ID, now, now)
			checkCode(t, "RotateSecret of a deleted endpoint", err, webhooks.ENOTFOUND)
			if ds := MustRegisterEvent(t, s, NewEvent(t, "invoice.paid", c.ID, at(2*time.Hour))); len(ds) != 0 {
				t.Errorf("deliveries of an event after the delete: got %d, want 0", len(ds))
			}
			if claims := MustClaim(t, s, at(3*time.Hour), 10); len(claims) != 0 {
				t.Errorf("claims after the delete: got %v, want none", claimIDs(claims))
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			checkCode(t, "DeleteEndpoint", deleteEndpoint(t, s, webhooks.NewID(), t0), webhooks.ENOTFOUND)
		})
	})
}

func testRotateSecret(t *testing.T, open func(t *testing.T) Store) {
	group(t, "RotateSecret", func(t *testing.T) {
		t.Run("Overlap", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			e := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			old := e.Secret
			now, expires := at(time.Hour), at(25*time.Hour)
			rot, err := rotateSecret(t, s, e.ID, expires, now)
			if err != nil {
				t.Fatalf("RotateSecret: %v", err)
			}
			secret := rot.Secret
			if secret == old || !strings.HasPrefix(secret, "whsec_") {
				t.Errorf("new secret: got %q, want a new whsec_ secret", secret)
			}
			if !rot.PreviousExpires.Equal(expires) || rot.PreviousStopped {
				t.Errorf("previous expires: got %s (stopped %t), want %s", rot.PreviousExpires, rot.PreviousStopped, expires)
			}
			want := *e
			want.Secret, want.PreviousSecret, want.PreviousSecretExpires, want.Updated = secret, old, expires, now
			checkEndpoint(t, "RotateSecret", rot.Endpoint.Endpoint, &want)
			found := MustFindEndpoint(t, s, e.ID)
			checkEndpoint(t, "FindEndpoint", found, &want)
			// Both sign until the old one expires, the new one first.
			if got, want := found.SigningSecrets(expires.Add(-time.Millisecond)), []string{secret, old}; !slices.Equal(got, want) {
				t.Errorf("signing secrets in the overlap: got %q, want %q", got, want)
			}
			if got, want := found.SigningSecrets(expires), []string{secret}; !slices.Equal(got, want) {
				t.Errorf("signing secrets at expiry: got %q, want %q", got, want)
			}
			checkLastAudit(t, s, a.ID, webhooks.AuditEndpointSecretRotated, webhooks.TargetEndpoint, e.ID, now)
		})

		t.Run("Again", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			first, err := rotateSecret(t, s, e.ID, at(24*time.Hour), at(time.Hour))
			if err != nil {
				t.Fatalf("RotateSecret: %v", err)
			}
			// Rotating during the overlap ends the first secret at once:
			// only one old secret is kept.
			now, expires := at(2*time.Hour), at(3*time.Hour)
			again, err := rotateSecret(t, s, e.ID, expires, now)
			if err != nil {
				t.Fatalf("RotateSecret: %v", err)
			}
			second, third := first.Secret, again.Secret
			found := MustFindEndpoint(t, s, e.ID)
			if found.Secret != third || found.PreviousSecret != second {
				t.Errorf("secrets after two rotations: got %q and %q, want the third and the second", found.Secret, found.PreviousSecret)
			}
			checkTime(t, "previous secret expires", found.PreviousSecretExpires, expires)
			if got, want := found.SigningSecrets(now), []string{third, second}; !slices.Equal(got, want) {
				t.Errorf("signing secrets: got %q, want %q", got, want)
			}
		})

		t.Run("Immediate", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			if _, err := rotateSecret(t, s, e.ID, at(24*time.Hour), at(time.Hour)); err != nil {
				t.Fatalf("RotateSecret: %v", err)
			}
			// expires_in 0 ends the old secret now, and the one in its
			// overlap with it.
			rot, err := rotateSecret(t, s, e.ID, at(2*time.Hour), at(2*time.Hour))
			if err != nil {
				t.Fatalf("RotateSecret: %v", err)
			}
			if !rot.PreviousStopped {
				t.Errorf("previous stopped: got false, want true")
			}
			secret := rot.Secret
			for _, e := range []*webhooks.Endpoint{rot.Endpoint.Endpoint, MustFindEndpoint(t, s, e.ID)} {
				if e.Secret != secret || e.PreviousSecret != "" || !e.PreviousSecretExpires.IsZero() {
					t.Errorf("got secret %q previous %q until %s, want the new one alone", e.Secret, e.PreviousSecret, e.PreviousSecretExpires)
				}
				if got := e.SigningSecrets(at(2 * time.Hour)); !slices.Equal(got, []string{secret}) {
					t.Errorf("signing secrets: got %q, want the new one alone", got)
				}
			}
		})

		// An overlap outside 0 to 7 days is refused before anything is
		// computed with it: a number of seconds that overflows a duration
		// must not wrap into an overlap that looks valid. The refusal is
		// audited and changes nothing.
		t.Run("ErrInvalid", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			e := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			for _, secs := range []int64{-1, 604801, 18446744074, math.MaxInt64, math.MinInt64} {
				_, err := UseCases(s, at(time.Hour)).RotateSecret(t.Context(), admin, ref(e.ID), &secs)
				checkCode(t, fmt.Sprintf("expires_in %d", secs), err, webhooks.EINVALID)
			}
			checkEndpoint(t, "after refused rotations", MustFindEndpoint(t, s, e.ID), e)
			entries := MustListAudit(t, s, a.ID)
			if len(entries) != 6 || entries[0].Action != webhooks.AuditEndpointSecretRotated || entries[0].Outcome != webhooks.AuditRefused ||
				entries[0].ErrorCode != webhooks.EINVALID {
				t.Errorf("audit: got %d entries, the newest %+v, want 5 refused rotations after the creation", len(entries), entries[0])
			}
		})

		t.Run("ErrNotFound", func(t *testing.T) {
			s := setup(t, open)
			_, err := rotateSecret(t, s, webhooks.NewID(), at(time.Hour), t0)
			checkCode(t, "RotateSecret", err, webhooks.ENOTFOUND)
		})
	})
}
