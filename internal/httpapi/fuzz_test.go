package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/queue"
)

// renderStore is the store and the registrar of FuzzEventJSON: Register
// renders the event in every payload version and envelope, as the real
// registrar does when it creates its deliveries, and reports what fails.
type renderStore struct {
	app.Store  // nil: any other method panics
	t          *testing.T
	registered int
}

// Catalog is an empty catalog: types are free-form.
func (s *renderStore) Catalog(context.Context) (int64, []*webhooks.EventType, error) {
	return 0, nil, nil
}

func (s *renderStore) Register(_ context.Context, r queue.Registration) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	ev := r.Event
	s.registered++
	if ev.AccountID == "" {
		ev.AccountID = webhooks.NewID() // the store fills it from the company
	}
	for _, v := range webhooks.APIVersions() {
		data, err := webhooks.RenderData(ev, v)
		if err != nil {
			s.t.Fatalf("a validated event does not render in %s: %v (object %s)", v, err, ev.Object)
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(data, &d); err != nil || !json.Valid(data) {
			s.t.Fatalf("%s data is not a JSON object: %s (%v)", v, data, err)
		}
		if d["object"] == nil || d["object"][0] != '{' {
			s.t.Fatalf("%s data has no object: %s", v, data)
		}
		if _, withType := d["type"]; withType != (v == webhooks.LatestAPIVersion) {
			s.t.Fatalf("%s data: type present %t: %s", v, withType, data)
		}
		for _, ep := range []*webhooks.Endpoint{
			{Scope: webhooks.ScopeCompany, APIVersion: v},
			{Scope: webhooks.ScopeAccount, APIVersion: v},
		} {
			body, err := webhooks.RenderBody(ev, ep, webhooks.RelationshipOwn)
			if err != nil || !json.Valid(body) {
				s.t.Fatalf("%s %s envelope: %v, valid JSON %t: %s", v, ep.Scope, err, json.Valid(body), body)
			}
		}
	}
	return ev, nil, true, nil
}

// FuzzEventJSON sends producer bodies through the registration handler,
// with its JSON decoding and Event.Validate: nothing panics, a refusal is
// one of the API's client errors, and every event it accepts renders as
// valid JSON in every payload version and envelope.
func FuzzEventJSON(f *testing.F) {
	company := "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42"
	for _, seed := range []string{
		// Accepted.
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":{"object":"invoice","id":"in_1","total":"1210.00","currency":"EUR"}}}`,
		`{"type":"invoice.credited","company_id":"` + company + `","livemode":false,"data":{"object":{"object":"invoice","total":"-3.5"}}}`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":{"total":"7","object":"invoice","total":"x"}}}`,
		`{"type":"account.updated","account_id":"` + company + `","correlation_id":"op-1","data":{"object":{"object":"account","name":"Fusteria Martí, S.L. — Girona"}}}`,
		`{"type":"credit_note.sent","company_id":"` + company + `","data":{"object":{"object":"credit_note","total":12,"lines":[{"a":null},true,1e400]}}}`,
		`{"type":"a.b","company_id":"` + company + `","data":{"object":{"\u006fbject":"invoice","t\u006ftal":"1.00","\ud800":"\u0000"}}}`,
		"{\"type\":\"a.b\",\"company_id\":\"" + company + "\",\"data\":{\"object\":{\"k\":\"\xff\xfe\"}}}",
		`  {"type" : "x.y" , "company_id" : "` + company + `" , "data" : { "object" : { } } }  `,
		// Refused.
		``,
		`{}`,
		`null`,
		`[]`,
		`{"type":"invoice.sent"`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":{"object":"invoice","total":"12.345"}}}`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":[]}}`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":"x"}}`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{}}`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":{}},"extra":1}`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":{},"extra":1}}`,
		`{"type":"invoice.sent","company_id":"` + company + `","data":{"object":{}}} {}`,
		`{"type":1,"company_id":"` + company + `","data":{"object":{}}}`,
		`{"type":"ping","company_id":"` + company + `","data":{"object":{}}}`,
		`{"type":"invoice.sent","data":{"object":{}}}`,
		`{"type":"invoice.sent","company_id":"ACME","data":{"object":{}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		store := &renderStore{t: t}
		now := func() time.Time { return time.Unix(1790590561, 0) }
		s := &Server{App: app.New(app.Config{Store: store, Registrar: store, Now: now}), Now: now}
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/events", bytes.NewReader(body))
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		err := s.handleCreateEvent(w, r, app.Admin())
		if err != nil {
			code := webhooks.ErrorCode(err)
			if status := StatusOf(code); status != 400 && status != 413 && status != 422 {
				t.Fatalf("body %q: got %d %s (%v), want a client error", body, status, code, err)
			}
			if store.registered != 0 {
				t.Fatalf("body %q: refused with %v after registering", body, err)
			}
			return
		}
		if w.Code != http.StatusCreated || store.registered != 1 {
			t.Fatalf("body %q: got %d after %d registrations, want 201 after 1", body, w.Code, store.registered)
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &ev); err != nil {
			t.Fatalf("body %q: the event answered is not JSON: %s", body, w.Body.Bytes())
		}
		var typ string
		json.Unmarshal(ev["type"], &typ)
		if webhooks.ValidateEventType(typ) != nil || typ == webhooks.PingEventType {
			t.Fatalf("body %q: accepted the event type %q", body, typ)
		}
	})
}
