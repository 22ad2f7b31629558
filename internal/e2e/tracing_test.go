package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/internal/tracing"
)

// The platform's request's span, as its traceparent header carries it.
const (
	platformTrace       = "4bf92f3577b34da6a3ce929d0e0e4736"
	platformSpan        = "00f067aa0ba902b7"
	platformTraceparent = "00-" + platformTrace + "-" + platformSpan + "-01"
)

// withTracing records the service's spans in rec.
func withTracing(rec *tracetest.SpanRecorder) options {
	tr := tracing.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	return func(c *service.Config) { c.Tracing = tr }
}

// withRetries makes failed attempts retry after each of waits.
func withRetries(waits ...time.Duration) options {
	return func(c *service.Config) { c.Policy = webhooks.RetryPolicy{Waits: waits} }
}

// spansNamed returns the ended spans named name about the event id (any
// event when id is empty).
func spansNamed(rec *tracetest.SpanRecorder, name, eventID string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() != name {
			continue
		}
		if eventID == "" || spanString(s, string(tracing.EventIDKey)) == eventID {
			out = append(out, s)
		}
	}
	return out
}

func spanString(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// checkLinked checks that each attempt span links to reg, and only to it.
func checkLinked(t *testing.T, attempts []sdktrace.ReadOnlySpan, reg sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, a := range attempts {
		links := a.Links()
		if len(links) != 1 || links[0].SpanContext.TraceID() != reg.SpanContext().TraceID() || links[0].SpanContext.SpanID() != reg.SpanContext().SpanID() {
			t.Errorf("attempt %s: links %+v, want one to the registration span %s", spanString(a, string(tracing.AttemptNumberKey)), links, reg.SpanContext().SpanID())
		}
		if a.Parent().IsValid() {
			t.Errorf("attempt span has parent %s: want a root, linked to the registration", a.Parent().SpanID())
		}
	}
}

// checkNoTraceHeaders checks that no request the sink got carried the
// platform's trace.
func checkNoTraceHeaders(t *testing.T, got []received) {
	t.Helper()
	for _, r := range got {
		for name := range r.header {
			if strings.EqualFold(name, "Traceparent") || strings.EqualFold(name, "Tracestate") || strings.Contains(strings.Join(r.header[name], ","), platformTrace) {
				t.Errorf("the receiver got %s: %q; the platform's trace must not reach it", name, r.header[name])
			}
		}
		if strings.Contains(string(r.body), platformTrace) {
			t.Error("the receiver's body carries the platform's trace id")
		}
	}
}

// TestTracing: with tracing on, a registration's span joins the trace of
// the platform's request (its traceparent), and each attempt's span, from
// the real engine, links to it: the first attempt, handed over at
// registration, and the retry, claimed from the database. No request to
// the receiver carries the trace. With tracing off, nothing is stored.
func TestTracing(t *testing.T) {
	for _, name := range []string{"SQLite", "PostgreSQL"} {
		// Each service gets a database of its own.
		backend := func(t *testing.T) []options {
			if name == "PostgreSQL" {
				return []options{withPostgres(t)}
			}
			return nil
		}
		t.Run(name, func(t *testing.T) {
			t.Run("Registration", func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				ts := startService(t, "", append(backend(t), withTracing(rec), withRetries(200*time.Millisecond))...)
				acme := ts.newAccount("Acme", "", "B12345674")
				s := newSink(t)
				s.setRespond(func(n int, w http.ResponseWriter, _ *http.Request) {
					if n == 1 {
						w.WriteHeader(http.StatusServiceUnavailable)
						return
					}
					w.WriteHeader(http.StatusOK)
				})
				ep := ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL + "/hooks?token=t0ps3cret", "enabled_events": []string{"*"}})
				header := http.Header{"Traceparent": {platformTraceparent}, "Tracestate": {"vendor=1"}}
				status, raw := ts.raw("POST", "/v1/events", adminKey, object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}}, header)
				if status != http.StatusCreated {
					t.Fatalf("POST /v1/events: got %d %s", status, raw)
				}
				eventID := eventIDOf(t, raw)
				ts.waitFor("two attempts stored", 10*time.Second, func() bool { return ts.attempts() >= 2 })

				regs := spansNamed(rec, tracing.RegisterSpan, eventID)
				if len(regs) != 1 {
					t.Fatalf("got %d registration spans of the event, want 1", len(regs))
				}
				reg := regs[0]
				if reg.SpanContext().TraceID().String() != platformTrace || reg.Parent().SpanID().String() != platformSpan || !reg.Parent().IsRemote() {
					t.Errorf("registration span: trace %s, parent %s; want a child of the platform's span %s in trace %s",
						reg.SpanContext().TraceID(), reg.Parent().SpanID(), platformSpan, platformTrace)
				}
				if got := reg.SpanContext().TraceState().Get("vendor"); got != "1" {
					t.Errorf("registration span's tracestate: vendor=%q, want the platform's 1", got)
				}
				for key, want := range map[string]string{
					string(tracing.EventTypeKey): "invoice.sent", string(tracing.CompanyIDKey): acme.companyID,
					string(tracing.AccountIDKey): acme.accountID, string(tracing.DeliveriesKey): "1",
				} {
					if got := spanString(reg, key); got != want {
						t.Errorf("registration span: %s = %q, want %q", key, got, want)
					}
				}

				attempts := spansNamed(rec, tracing.AttemptSpan, eventID)
				if len(attempts) != 2 {
					t.Fatalf("got %d attempt spans of the event, want 2", len(attempts))
				}
				checkLinked(t, attempts, reg)
				for i, want := range []struct{ number, status, outcome string }{{"1", "503", "retry"}, {"2", "200", "delivered"}} {
					a := attempts[i]
					if spanString(a, string(tracing.AttemptNumberKey)) != want.number || spanString(a, "http.response.status_code") != want.status ||
						spanString(a, string(tracing.OutcomeKey)) != want.outcome || spanString(a, string(tracing.EndpointIDKey)) != ep.id {
						t.Errorf("attempt span %d: %v, want attempt %s to %s answered %s (%s)", i, a.Attributes(), want.number, ep.id, want.status, want.outcome)
					}
					for _, kv := range a.Attributes() {
						if strings.Contains(kv.Value.String(), "t0ps3cret") || strings.Contains(kv.Value.String(), "/hooks") {
							t.Errorf("attempt span exports %s=%q, from the endpoint's URL", kv.Key, kv.Value.String())
						}
					}
				}
				checkNoTraceHeaders(t, s.requests())
			})

			t.Run("Batch", func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				ts := startService(t, "", append(backend(t), withTracing(rec))...)
				acme := ts.newAccount("Acme", "", "B12345674")
				s := newSink(t)
				ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
				ev := object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}}
				status, raw := ts.raw("POST", "/v1/events/batch", adminKey, object{"events": []any{ev, ev, object{"type": "invoice.sent", "data": object{"object": invoice}}}},
					http.Header{"Traceparent": {platformTraceparent}})
				if status != http.StatusOK {
					t.Fatalf("POST /v1/events/batch: got %d %s", status, raw)
				}
				ts.waitFor("two attempts stored", 10*time.Second, func() bool { return ts.attempts() >= 2 })
				batches := spansNamed(rec, tracing.BatchSpan, "")
				if len(batches) != 1 || batches[0].Parent().SpanID().String() != platformSpan || batches[0].SpanContext().TraceID().String() != platformTrace {
					t.Fatalf("batch spans: got %d, want one, a child of the platform's span", len(batches))
				}
				batch := batches[0]
				if got := spanString(batch, string(tracing.BatchRefusedKey)); got != "1" {
					t.Errorf("batch span: %s = %q, want 1 (the event without a company)", tracing.BatchRefusedKey, got)
				}
				regs := spansNamed(rec, tracing.RegisterSpan, "")
				if len(regs) != 3 {
					t.Fatalf("got %d registration spans, want 3 (one per event, the refused one too)", len(regs))
				}
				linked := 0
				for _, reg := range regs {
					if reg.Parent().SpanID() != batch.SpanContext().SpanID() {
						t.Errorf("registration span %s: parent %s, want the batch's %s", reg.SpanContext().SpanID(), reg.Parent().SpanID(), batch.SpanContext().SpanID())
					}
					id := spanString(reg, string(tracing.EventIDKey))
					if id == "" {
						continue // the refused event
					}
					attempts := spansNamed(rec, tracing.AttemptSpan, id)
					if len(attempts) != 1 {
						t.Errorf("event %s: %d attempt spans, want 1", id, len(attempts))
					}
					checkLinked(t, attempts, reg)
					linked++
				}
				if linked != 2 {
					t.Errorf("got %d registered events with spans, want 2", linked)
				}
				checkNoTraceHeaders(t, s.requests())
			})

			// What is stored with the event: the registration span's
			// traceparent with tracing on, nothing with it off, whatever
			// the request carries.
			for _, on := range []bool{true, false} {
				label := map[bool]string{true: "Stored", false: "Off"}[on]
				t.Run(label, func(t *testing.T) {
					rec := tracetest.NewSpanRecorder()
					o := append(backend(t), withRetries(time.Hour))
					if on {
						o = append(o, withTracing(rec))
					}
					ts := startService(t, "", o...)
					acme := ts.newAccount("Acme", "", "B12345674")
					s := newSink(t)
					s.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
					ts.newEndpoint("/v1/companies/"+acme.companyID, acme.key, object{"url": s.URL, "enabled_events": []string{"*"}})
					status, raw := ts.raw("POST", "/v1/events", adminKey, object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}},
						http.Header{"Traceparent": {platformTraceparent}})
					if status != http.StatusCreated {
						t.Fatalf("POST /v1/events: got %d %s", status, raw)
					}
					eventID := eventIDOf(t, raw)
					ts.waitFor("the first attempt stored", 10*time.Second, func() bool { return ts.attempts() >= 1 })
					// The retry is an hour away: claim it now, asking for
					// the traceparent stored with its event.
					later := time.Now().Add(2 * time.Hour)
					claims, err := ts.svc.Queue.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{
						Now: later, Limit: 10, Token: webhooks.NewID(), LeaseUntil: later.Add(time.Minute), Traceparents: true,
					})
					if err != nil || len(claims) != 1 {
						t.Fatalf("claim of the retry: got %d claims, %v; want 1", len(claims), err)
					}
					want := ""
					if on {
						regs := spansNamed(rec, tracing.RegisterSpan, eventID)
						if len(regs) != 1 {
							t.Fatalf("got %d registration spans, want 1", len(regs))
						}
						want = tracing.Traceparent(regs[0].SpanContext())
					}
					if got := claims[0].Traceparent; got != want {
						t.Errorf("traceparent stored with the event: got %q, want %q", got, want)
					}
					checkNoTraceHeaders(t, s.requests())
				})
			}
		})
	}
}

// eventIDOf returns the id of the event an answer of POST /v1/events
// holds.
func eventIDOf(t *testing.T, raw []byte) string {
	t.Helper()
	var ev struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil || !webhooks.ValidID(ev.ID) {
		t.Fatalf("no event id in %s (%v)", raw, err)
	}
	return ev.ID
}
