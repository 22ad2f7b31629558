// Package tracing makes the service's OpenTelemetry spans: one for each
// registration of an event (joined to the trace of the platform's request
// by its W3C traceparent) and one for each attempt of a delivery, linked
// to the span that registered its event. It is off by default and
// configured by the standard OTEL_* variables (see FromEnv).
//
// A nil *Tracing is tracing off. Every method then returns at once and
// allocates nothing: registration and delivery run at thousands per
// second, and tracing off must cost them nothing measurable.
//
// What a span never carries: payloads (data.object, request and response
// bodies), secrets and keys, and endpoint URLs beyond their host (a path
// or query string may hold a customer's token). And the traceparent is
// never sent to a customer's receiver: it would give away the platform's
// trace ids (see internal/delivery, whose requests carry no trace
// headers).
package tracing

import (
	"context"
	"encoding/hex"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation is the name of the tracer, as OpenTelemetry asks: the
// instrumented module's.
const instrumentation = "github.com/factuarea/webhooks"

// Tracing makes the service's spans with one tracer provider.
type Tracing struct {
	tracer   trace.Tracer
	shutdown func(context.Context) error
	// propagator reads the platform's request's context (nil: none), and
	// headers are the headers without which it reads nothing.
	propagator propagation.TextMapPropagator
	headers    []string
}

// DefaultPropagators are the propagators unless OTEL_PROPAGATORS says
// otherwise: OpenTelemetry's default.
var DefaultPropagators = []string{"tracecontext", "baggage"}

// New returns the tracing of spans made by tp (tests pass one with the
// SDK's in-memory exporter; FromEnv makes the service's), reading the
// platform's requests with DefaultPropagators.
func New(tp trace.TracerProvider) *Tracing {
	t := &Tracing{tracer: tp.Tracer(instrumentation), shutdown: func(context.Context) error { return nil }}
	t.setPropagators(DefaultPropagators)
	return t
}

// setPropagators makes t read requests with the propagators names (of
// readPropagators: tracecontext, baggage), none when there is none.
func (t *Tracing) setPropagators(names []string) {
	var props []propagation.TextMapPropagator
	t.headers = nil
	for _, name := range names {
		switch name {
		case "tracecontext":
			// tracestate without traceparent is ignored.
			props, t.headers = append(props, traceContext), append(t.headers, "Traceparent")
		case "baggage":
			props, t.headers = append(props, propagation.Baggage{}), append(t.headers, "Baggage")
		}
	}
	switch len(props) {
	case 0:
		t.propagator = nil
	case 1:
		t.propagator = props[0]
	default:
		t.propagator = propagation.NewCompositeTextMapPropagator(props...)
	}
}

// Enabled reports whether tracing is on.
func (t *Tracing) Enabled() bool { return t != nil }

// Shutdown exports the spans not exported yet and stops the exporter,
// within ctx. Call it once the service stopped, so that the last
// attempts' spans are exported.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// traceContext is the W3C Trace Context propagator (traceparent and
// tracestate headers): what the platform's request carries.
var traceContext propagation.TraceContext

// Extract returns ctx with what the propagators (OTEL_PROPAGATORS) read
// from a request's headers, if any: with tracecontext, the span context
// of its traceparent and tracestate headers, so that the spans started
// from it join the platform's trace; with baggage, its baggage header
// (which no span and no webhook request carries further). With tracing
// off, or propagation off (none), it returns ctx as it is.
func (t *Tracing) Extract(ctx context.Context, h http.Header) context.Context {
	if t == nil || t.propagator == nil {
		return ctx
	}
	for _, name := range t.headers {
		if len(h[name]) > 0 {
			return t.propagator.Extract(ctx, propagation.HeaderCarrier(h))
		}
	}
	return ctx
}

// Traceparent formats sc as a W3C traceparent, version 00 (empty if sc is
// not valid).
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	var b [55]byte // 00-<32 hex>-<16 hex>-<2 hex>
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:], []byte{byte(sc.TraceFlags())})
	return string(b[:])
}

// ParseTraceparent reads a traceparent of version 00, as Traceparent
// writes it and the store keeps it; the span context is not valid if s is
// not one.
func ParseTraceparent(s string) trace.SpanContext {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return trace.SpanContext{}
	}
	tid, err1 := trace.TraceIDFromHex(s[3:35])
	sid, err2 := trace.SpanIDFromHex(s[36:52])
	var flags [1]byte
	_, err3 := hex.Decode(flags[:], []byte(s[53:]))
	if err1 != nil || err2 != nil || err3 != nil {
		return trace.SpanContext{}
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags[0]), Remote: true})
}
