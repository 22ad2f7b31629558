package tracing

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	webhooks "github.com/factuarea/webhooks"
)

const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestTraceparent: a span context is written and read back as a W3C
// traceparent; what is not one reads as no span context.
func TestTraceparent(t *testing.T) {
	sc := ParseTraceparent(incoming)
	if !sc.IsValid() || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() != "00f067aa0ba902b7" || !sc.IsSampled() {
		t.Fatalf("ParseTraceparent(%q): got %+v", incoming, sc)
	}
	if got := Traceparent(sc); got != incoming {
		t.Errorf("Traceparent: got %q, want %q", got, incoming)
	}
	for _, bad := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "junk"} {
		if sc := ParseTraceparent(bad); sc.IsValid() {
			t.Errorf("ParseTraceparent(%q): got a valid span context", bad)
		}
	}
	if got := Traceparent(trace.SpanContext{}); got != "" {
		t.Errorf("Traceparent of no span context: got %q", got)
	}
}

// TestOff_NoAllocations: with tracing off, what registration and the
// engine call of it allocates nothing, whatever the request carries.
func TestOff_NoAllocations(t *testing.T) {
	var tr *Tracing
	ctx := context.Background()
	h := http.Header{"Traceparent": {incoming}}
	ev := &webhooks.Event{ID: "e", Type: "invoice.sent"}
	claim := &webhooks.Claim{Delivery: &webhooks.Delivery{ID: "d"}, Endpoint: &webhooks.Endpoint{URL: "https://x.example/"}, Traceparent: incoming}
	rec := &webhooks.AttemptRecord{Attempt: &webhooks.Attempt{ResponseStatus: 500}}
	refused := errors.New("refused")
	allocs := testing.AllocsPerRun(1000, func() {
		c, reg := tr.StartRegistration(tr.Extract(ctx, h), false)
		reg.Event(ev)
		reg.End(ev, 1, true, nil)
		c, batch := tr.StartBatch(c, 2)
		batch.End(0, refused)
		att := tr.StartAttempt(claim, time.Time{})
		att.End(rec, webhooks.OutcomeRetry, time.Time{})
		tr.StartAttempt(claim, time.Time{}).Abort()
		_ = c
	})
	if allocs != 0 || ev.Traceparent != "" {
		t.Errorf("tracing off: %v allocations a registration and attempt, traceparent %q; want none", allocs, ev.Traceparent)
	}
}

// TestSpans: the spans' names, kinds, parents, links and attributes, and
// the registration's traceparent given to its event.
func TestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	ctx := tr.Extract(context.Background(), http.Header{"Traceparent": {incoming}})

	bctx, batch := tr.StartBatch(ctx, 2)
	_, reg := tr.StartRegistration(bctx, true)
	ev := &webhooks.Event{ID: webhooks.NewID(), Type: "invoice.sent", AccountID: "acc", CompanyID: "co"}
	reg.Event(ev)
	reg.End(ev, 3, true, nil)
	_, bad := tr.StartRegistration(bctx, true)
	bad.End(nil, 0, false, webhooks.Errorf(webhooks.EUNKNOWNCOMPANY, "company_id x is not a company."))
	batch.End(1, nil)
	_, internal := tr.StartRegistration(ctx, false)
	internal.End(nil, 0, false, errors.New("pq: relation events is locked"))

	d := &webhooks.Delivery{ID: "dlv", EventID: ev.ID, EventType: ev.Type, EndpointID: "ep", AttemptCount: 2}
	start := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	att := tr.StartAttempt(&webhooks.Claim{Delivery: d, Endpoint: &webhooks.Endpoint{URL: "https://hooks.example.com:8443/in/tok?x=1"}, Traceparent: ev.Traceparent}, start)
	att.End(&webhooks.AttemptRecord{Attempt: &webhooks.Attempt{Number: 3, ResponseStatus: 503, Error: ""}, Transition: webhooks.Transition{Status: webhooks.DeliveryPending}},
		webhooks.OutcomeRetry, start.Add(time.Second))

	spans := rec.Ended()
	if len(spans) != 5 {
		t.Fatalf("got %d spans, want 5", len(spans))
	}
	item, refused, b, internalSpan, a := spans[0], spans[1], spans[2], spans[3], spans[4]
	parent := ParseTraceparent(incoming)
	if b.Name() != BatchSpan || b.SpanKind() != trace.SpanKindServer || b.Parent().SpanID() != parent.SpanID() || b.SpanContext().TraceID() != parent.TraceID() {
		t.Errorf("batch span: got %s %s parent %s, want %s, server, a child of the request's", b.Name(), b.SpanKind(), b.Parent().SpanID(), BatchSpan)
	}
	if item.Name() != RegisterSpan || item.SpanKind() != trace.SpanKindInternal || item.Parent().SpanID() != b.SpanContext().SpanID() {
		t.Errorf("item span: got %s %s, parent %s; want a child of the batch's", item.Name(), item.SpanKind(), item.Parent().SpanID())
	}
	if ev.Traceparent != Traceparent(item.SpanContext()) {
		t.Errorf("the event's traceparent: got %q, want its registration span's %q", ev.Traceparent, Traceparent(item.SpanContext()))
	}
	checkAttrs(t, item, map[string]any{"webhooks.event.id": ev.ID, "webhooks.event.type": "invoice.sent", "webhooks.account.id": "acc",
		"webhooks.company.id": "co", "webhooks.deliveries": int64(3), "webhooks.event.repeated": false})
	if refused.Status().Code != codes.Error || refused.Status().Description != "company_id x is not a company." {
		t.Errorf("refused registration's status: got %+v", refused.Status())
	}
	checkAttrs(t, refused, map[string]any{"error.type": webhooks.EUNKNOWNCOMPANY})
	checkAttrs(t, b, map[string]any{"webhooks.batch.size": int64(2), "webhooks.batch.refused": int64(1)})
	if internalSpan.SpanKind() != trace.SpanKindServer || internalSpan.Status().Description != "Internal error." {
		t.Errorf("an internal error's span: kind %s, status %+v; want server, without the error's text", internalSpan.SpanKind(), internalSpan.Status())
	}

	if a.Name() != AttemptSpan || a.SpanKind() != trace.SpanKindClient || a.Parent().IsValid() || a.SpanContext().TraceID() == parent.TraceID() {
		t.Errorf("attempt span: got %s %s parent %v; want a client root of a trace of its own", a.Name(), a.SpanKind(), a.Parent())
	}
	if links := a.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != item.SpanContext().SpanID() || links[0].SpanContext.TraceID() != parent.TraceID() {
		t.Errorf("attempt links: got %+v, want one to the registration span", links)
	}
	if !a.StartTime().Equal(start) || !a.EndTime().Equal(start.Add(time.Second)) {
		t.Errorf("attempt span: from %s to %s, want the attempt's times", a.StartTime(), a.EndTime())
	}
	checkAttrs(t, a, map[string]any{"webhooks.delivery.id": "dlv", "webhooks.event.id": ev.ID, "webhooks.endpoint.id": "ep",
		"webhooks.attempt.number": int64(3), "webhooks.attempt.outcome": "retry", "webhooks.delivery.status": "pending",
		"http.response.status_code": int64(503), "error.type": "503", "server.address": "hooks.example.com"})
	if a.Status().Code != codes.Error {
		t.Errorf("a failed attempt's status: got %+v", a.Status())
	}
}

func checkAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	got := map[string]any{}
	for _, kv := range s.Attributes() {
		got[string(kv.Key)] = kv.Value.AsInterface()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %s: %s = %v (%T), want %v", s.Name(), k, got[k], got[k], v)
		}
	}
}

// TestTraceparent_Propagator: what Traceparent writes, the W3C propagator
// reads as the same span context, and what it writes ParseTraceparent
// reads: the stored traceparent is the standard header.
func TestTraceparent_Propagator(t *testing.T) {
	for _, flags := range []trace.TraceFlags{0, trace.FlagsSampled} {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3, 0xab}, SpanID: trace.SpanID{9, 0xcd}, TraceFlags: flags})
		got := trace.SpanContextFromContext(traceContext.Extract(context.Background(), propagation.MapCarrier{"traceparent": Traceparent(sc)}))
		if !got.Equal(sc.WithRemote(true)) {
			t.Errorf("flags %s: the propagator read %+v from %q, want %+v", flags, got, Traceparent(sc), sc)
		}
		c := propagation.MapCarrier{}
		traceContext.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
		if back := ParseTraceparent(c["traceparent"]); !back.Equal(sc.WithRemote(true)) {
			t.Errorf("flags %s: ParseTraceparent(%q): got %+v, want %+v", flags, c["traceparent"], back, sc)
		}
	}
	for _, bad := range []string{
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
	} {
		if sc := ParseTraceparent(bad); sc.IsValid() {
			t.Errorf("ParseTraceparent(%q): got a valid span context", bad)
		}
	}
}
