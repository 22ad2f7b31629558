package storetest

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// NewRelayEndpoint returns an unsaved relay endpoint (SPEC 20) of the
// account, subscribed to events.
func NewRelayEndpoint(accountID string, events ...string) *webhooks.Endpoint {
	e := NewAccountEndpoint(accountID, nil, events...)
	e.URL, e.Relay = "", true
	return e
}

func testRelay(t *testing.T, open func(t *testing.T) Store) {
	group(t, "RelayEndpoint", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			ep := MustCreateEndpoint(t, s, NewRelayEndpoint(a.ID, "*"))
			got := MustFindEndpoint(t, s, ep.ID)
			if !got.Relay || got.URL != "" || got.Secret == "" {
				t.Errorf("FindEndpoint: got relay %t, url %q, secret %q; want relay, no url, a secret", got.Relay, got.URL, got.Secret)
			}
			normal := MustCreateEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "*"))
			if MustFindEndpoint(t, s, normal.ID).Relay {
				t.Errorf("FindEndpoint of an endpoint with a url: got relay true, want false")
			}
		})

		t.Run("Company", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			co := MustCreateCompany(t, s, a.ID)
			e := NewCompanyEndpoint(co.ID, "invoice.*")
			e.URL, e.Relay = "", true
			ep := MustCreateEndpoint(t, s, e)
			if got := MustFindEndpoint(t, s, ep.ID); !got.Relay || got.CompanyID != co.ID {
				t.Errorf("FindEndpoint: got relay %t of company %q, want a relay endpoint of %s", got.Relay, got.CompanyID, co.ID)
			}
		})

		t.Run("ErrInvalid", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			withURL := NewRelayEndpoint(a.ID, "*")
			withURL.URL = "https://receiver.example.com/hooks"
			_, err := createEndpoint(t, s, withURL)
			checkCode(t, "relay with a url", err, webhooks.EINVALID)
			noURL := NewAccountEndpoint(a.ID, nil, "*")
			noURL.URL = ""
			_, err = createEndpoint(t, s, noURL)
			checkCode(t, "no url, no relay", err, webhooks.EINVALID)
			platform := &webhooks.Endpoint{Scope: webhooks.ScopePlatform, Relay: true, EnabledEvents: []string{"*"}, Livemode: true}
			_, err = createEndpoint(t, s, platform)
			checkCode(t, "platform relay", err, webhooks.EINVALID)
			list, err := s.ListEndpoints(t.Context(), webhooks.EndpointFilter{AccountID: a.ID}, webhooks.Page{Limit: 10})
			if err != nil || len(list.Data) != 0 {
				t.Errorf("ListEndpoints after refusals: got %d endpoints (err %v), want none", len(list.Data), err)
			}
		})

		t.Run("ErrURLChange", func(t *testing.T) {
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			ep := MustCreateEndpoint(t, s, NewRelayEndpoint(a.ID, "*"))
			u := "https://receiver.example.com/hooks"
			_, err := updateEndpoint(t, s, ep.ID, &webhooks.EndpointUpdate{URL: &u}, at(time.Minute))
			checkCode(t, "PATCH url", err, webhooks.EINVALID)
			if got := MustFindEndpoint(t, s, ep.ID); got.URL != "" || !got.Relay {
				t.Errorf("after the refused PATCH: got url %q relay %t, want none and true", got.URL, got.Relay)
			}
		})

		t.Run("Claim", func(t *testing.T) {
			// The engine tells a relay endpoint's attempts by the claim's
			// endpoint.
			s := setup(t, open)
			a := MustCreateAccount(t, s, "")
			ep := MustCreateEndpoint(t, s, NewRelayEndpoint(a.ID, "*"))
			d := MustRegisterOne(t, s, NewAccountEvent(t, "account.updated", a.ID, at(time.Second)), ep.ID)
			c := MustClaimOne(t, s, d.ID, at(2*time.Second))
			if !c.Endpoint.Relay || c.Endpoint.URL != "" {
				t.Errorf("claim's endpoint: got relay %t url %q, want relay and no url", c.Endpoint.Relay, c.Endpoint.URL)
			}
		})
	})

	group(t, "RelayMailbox", func(t *testing.T) {
		lost := webhooks.RelayAnswer{Error: webhooks.RelayLost}
		newRequest := func(endpointID string, created time.Time) *webhooks.RelayRequest {
			return &webhooks.RelayRequest{ID: webhooks.NewID(), EndpointID: endpointID, DeliveryID: webhooks.NewID(),
				Header: map[string][]string{"Factuarea-Signature": {"t=1,v1=ab"}}, Body: []byte(`{"id":"x"}`), Created: created}
		}
		answerOf := func(t *testing.T, s Store, id string) *webhooks.RelayAnswer {
			t.Helper()
			a, err := s.RelayAnswer(t.Context(), id)
			if err != nil {
				t.Fatalf("RelayAnswer: %v", err)
			}
			return a
		}
		take := func(t *testing.T, s Store, endpointID, session string, since time.Time) []*webhooks.RelayRequest {
			t.Helper()
			rs, err := s.TakeRelayRequests(t.Context(), endpointID, session, since, 10)
			if err != nil {
				t.Fatalf("TakeRelayRequests: %v", err)
			}
			return rs
		}

		t.Run("Session", func(t *testing.T) {
			s := setup(t, open)
			ep, s1, s2 := webhooks.NewID(), webhooks.NewID(), webhooks.NewID()
			if got, err := s.RelaySession(t.Context(), ep, t0); got != "" || err != nil {
				t.Fatalf("RelaySession before any: got %q (%v), want none", got, err)
			}
			if err := s.ConnectRelay(t.Context(), ep, s1, at(15*time.Second), lost); err != nil {
				t.Fatalf("ConnectRelay: %v", err)
			}
			if got, _ := s.RelaySession(t.Context(), ep, at(time.Second)); got != s1 {
				t.Errorf("RelaySession: got %q, want %s", got, s1)
			}
			if got, _ := s.RelaySession(t.Context(), ep, at(15*time.Second)); got != "" {
				t.Errorf("RelaySession once expired: got %q, want none", got)
			}
			if held, err := s.RenewRelay(t.Context(), ep, s1, at(30*time.Second)); !held || err != nil {
				t.Errorf("RenewRelay: got %t (%v), want held", held, err)
			}
			if got, _ := s.RelaySession(t.Context(), ep, at(20*time.Second)); got != s1 {
				t.Errorf("RelaySession after renewal: got %q, want %s", got, s1)
			}
			// A newer connection takes over; the older one's renewal fails.
			if err := s.ConnectRelay(t.Context(), ep, s2, at(30*time.Second), lost); err != nil {
				t.Fatalf("ConnectRelay: %v", err)
			}
			if held, _ := s.RenewRelay(t.Context(), ep, s1, at(40*time.Second)); held {
				t.Errorf("RenewRelay of the replaced session: got held, want not")
			}
			// Disconnecting the replaced session leaves the newer one.
			if err := s.DisconnectRelay(t.Context(), ep, s1, lost); err != nil {
				t.Fatalf("DisconnectRelay: %v", err)
			}
			if got, _ := s.RelaySession(t.Context(), ep, at(time.Second)); got != s2 {
				t.Errorf("RelaySession: got %q, want %s", got, s2)
			}
			if err := s.DisconnectRelay(t.Context(), ep, s2, lost); err != nil {
				t.Fatalf("DisconnectRelay: %v", err)
			}
			if got, _ := s.RelaySession(t.Context(), ep, at(time.Second)); got != "" {
				t.Errorf("RelaySession after disconnect: got %q, want none", got)
			}
		})

		t.Run("Exchange", func(t *testing.T) {
			s := setup(t, open)
			ep, other, session := webhooks.NewID(), webhooks.NewID(), webhooks.NewID()
			r1, r2 := newRequest(ep, at(time.Second)), newRequest(ep, at(2*time.Second))
			for _, r := range []*webhooks.RelayRequest{r2, r1, newRequest(other, at(time.Second))} {
				if err := s.PutRelayRequest(t.Context(), r); err != nil {
					t.Fatalf("PutRelayRequest: %v", err)
				}
			}
			got := take(t, s, ep, session, t0)
			if len(got) != 2 || got[0].ID != r1.ID || got[1].ID != r2.ID {
				t.Fatalf("TakeRelayRequests: got %d requests, want %s then %s", len(got), r1.ID, r2.ID)
			}
			if string(got[0].Body) != string(r1.Body) || got[0].Header["Factuarea-Signature"][0] != "t=1,v1=ab" ||
				got[0].DeliveryID != r1.DeliveryID || !got[0].Created.Equal(r1.Created) {
				t.Errorf("TakeRelayRequests: got %+v, want %+v", got[0], r1)
			}
			if again := take(t, s, ep, session, t0); len(again) != 0 {
				t.Errorf("TakeRelayRequests again: got %d, want none (each request is sent once)", len(again))
			}
			if a := answerOf(t, s, r1.ID); a != nil {
				t.Errorf("RelayAnswer before the answer: got %+v, want none", a)
			}
			want := webhooks.RelayAnswer{Status: 202, Duration: 15 * time.Millisecond, Body: "ok"}
			if ok, err := s.AnswerRelayRequest(t.Context(), other, r1.ID, want); ok || err != nil {
				t.Errorf("AnswerRelayRequest under another endpoint: got %t (%v), want refused", ok, err)
			}
			if ok, err := s.AnswerRelayRequest(t.Context(), ep, r1.ID, want); !ok || err != nil {
				t.Fatalf("AnswerRelayRequest: got %t (%v), want stored", ok, err)
			}
			if ok, _ := s.AnswerRelayRequest(t.Context(), ep, r1.ID, webhooks.RelayAnswer{Status: 500}); ok {
				t.Errorf("AnswerRelayRequest twice: got stored, want refused (the first answer stands)")
			}
			if a := answerOf(t, s, r1.ID); a == nil || *a != want {
				t.Errorf("RelayAnswer: got %+v, want %+v", a, want)
			}
			if err := s.DeleteRelayRequest(t.Context(), r1.ID); err != nil {
				t.Fatalf("DeleteRelayRequest: %v", err)
			}
			if a := answerOf(t, s, r1.ID); a != nil {
				t.Errorf("RelayAnswer once deleted: got %+v, want none", a)
			}
			if ok, _ := s.AnswerRelayRequest(t.Context(), ep, r1.ID, want); ok {
				t.Errorf("AnswerRelayRequest of a deleted request: got stored, want refused")
			}
		})

		t.Run("Lost", func(t *testing.T) {
			// What a connection took and did not answer is answered lost
			// when it disconnects or is replaced; what it did not take
			// waits for the next connection.
			s := setup(t, open)
			ep, s1, s2 := webhooks.NewID(), webhooks.NewID(), webhooks.NewID()
			if err := s.ConnectRelay(t.Context(), ep, s1, at(time.Minute), lost); err != nil {
				t.Fatal(err)
			}
			sent := newRequest(ep, at(time.Second))
			s.PutRelayRequest(t.Context(), sent)
			take(t, s, ep, s1, t0)
			unsent := newRequest(ep, at(2*time.Second))
			s.PutRelayRequest(t.Context(), unsent)
			if err := s.ConnectRelay(t.Context(), ep, s2, at(time.Minute), lost); err != nil {
				t.Fatal(err)
			}
			if a := answerOf(t, s, sent.ID); a == nil || *a != lost {
				t.Errorf("RelayAnswer of the replaced connection's request: got %+v, want %+v", a, lost)
			}
			got := take(t, s, ep, s2, t0)
			if len(got) != 1 || got[0].ID != unsent.ID {
				t.Fatalf("TakeRelayRequests by the new connection: got %d, want the unsent one", len(got))
			}
			if err := s.DisconnectRelay(t.Context(), ep, s2, lost); err != nil {
				t.Fatal(err)
			}
			if a := answerOf(t, s, unsent.ID); a == nil || *a != lost {
				t.Errorf("RelayAnswer after the disconnect: got %+v, want %+v", a, lost)
			}
		})

		t.Run("Orphans", func(t *testing.T) {
			// A request older than since was left by an attempt whose
			// process died: it is dropped, never sent.
			s := setup(t, open)
			ep, session := webhooks.NewID(), webhooks.NewID()
			old, fresh := newRequest(ep, at(time.Second)), newRequest(ep, at(time.Minute))
			s.PutRelayRequest(t.Context(), old)
			s.PutRelayRequest(t.Context(), fresh)
			got := take(t, s, ep, session, at(30*time.Second))
			if len(got) != 1 || got[0].ID != fresh.ID {
				t.Fatalf("TakeRelayRequests: got %d, want the fresh one alone", len(got))
			}
			if ok, _ := s.AnswerRelayRequest(t.Context(), ep, old.ID, webhooks.RelayAnswer{Status: 200}); ok {
				t.Errorf("AnswerRelayRequest of a dropped orphan: got stored, want refused")
			}
		})
	})
}
