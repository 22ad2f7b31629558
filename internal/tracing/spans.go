package tracing

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	webhooks "github.com/factuarea/webhooks"
)

// Span names.
const (
	RegisterSpan = "webhooks.register"       // POST /v1/events, or one event of a batch
	BatchSpan    = "webhooks.register_batch" // POST /v1/events/batch
	AttemptSpan  = "webhooks.attempt"        // one attempt of a delivery
)

// Attribute keys of the service's spans (the others are OpenTelemetry's
// semantic conventions: error.type, http.response.status_code,
// server.address).
const (
	EventIDKey        = attribute.Key("webhooks.event.id")
	EventTypeKey      = attribute.Key("webhooks.event.type")
	CompanyIDKey      = attribute.Key("webhooks.company.id")
	AccountIDKey      = attribute.Key("webhooks.account.id")
	DeliveriesKey     = attribute.Key("webhooks.deliveries")     // the deliveries a registration created
	RepeatedKey       = attribute.Key("webhooks.event.repeated") // the Idempotency-Key repeated a registration
	BatchSizeKey      = attribute.Key("webhooks.batch.size")
	BatchRefusedKey   = attribute.Key("webhooks.batch.refused")
	DeliveryIDKey     = attribute.Key("webhooks.delivery.id")
	EndpointIDKey     = attribute.Key("webhooks.endpoint.id")
	AttemptNumberKey  = attribute.Key("webhooks.attempt.number")
	AttemptManualKey  = attribute.Key("webhooks.attempt.manual")
	OutcomeKey        = attribute.Key("webhooks.attempt.outcome")
	DeliveryStatusKey = attribute.Key("webhooks.delivery.status") // the delivery's state after the attempt
)

// Registration is the span of one registration. Its zero value, what
// tracing off starts, does nothing.
type Registration struct{ span trace.Span }

// StartRegistration starts the span of a registration, a child of ctx's
// span (the platform's, from Extract, or the batch's). inBatch says it is
// one event of a batch, whose request the batch's span stands for.
func (t *Tracing) StartRegistration(ctx context.Context, inBatch bool) (context.Context, Registration) {
	if t == nil {
		return ctx, Registration{}
	}
	kind := trace.SpanKindServer
	if inBatch {
		kind = trace.SpanKindInternal
	}
	ctx, span := t.tracer.Start(ctx, RegisterSpan, trace.WithSpanKind(kind))
	return ctx, Registration{span}
}

// Event names the event being registered, and gives it the span's
// traceparent to be stored with it if the span is sampled (an attempt's
// link to a span nobody recorded would lead nowhere).
func (r Registration) Event(ev *webhooks.Event) {
	if r.span == nil {
		return
	}
	r.span.SetAttributes(eventAttributes(ev)...)
	if sc := r.span.SpanContext(); sc.IsSampled() {
		ev.Traceparent = Traceparent(sc)
	}
}

// End ends the span with what became of the registration: the event
// registered (or the first one, when its key repeated one) and how many
// deliveries it created, or the error that refused it.
func (r Registration) End(ev *webhooks.Event, deliveries int, created bool, err error) {
	if r.span == nil {
		return
	}
	switch {
	case err != nil:
		setError(r.span, err)
	case created: // the store filled the account from the company
		r.span.SetAttributes(AccountIDKey.String(ev.AccountID), DeliveriesKey.Int(deliveries), RepeatedKey.Bool(false))
	default: // the key repeated a registration: ev is the first one
		r.span.SetAttributes(EventIDKey.String(ev.ID), AccountIDKey.String(ev.AccountID), DeliveriesKey.Int(0), RepeatedKey.Bool(true))
	}
	r.span.End()
}

// eventAttributes are the attributes of an event being registered (its
// account, when it names a company, is known once registered: see End).
func eventAttributes(ev *webhooks.Event) []attribute.KeyValue {
	attrs := []attribute.KeyValue{EventIDKey.String(ev.ID), EventTypeKey.String(ev.Type)}
	if ev.CompanyID != "" {
		attrs = append(attrs, CompanyIDKey.String(ev.CompanyID))
	}
	if ev.AccountID != "" {
		attrs = append(attrs, AccountIDKey.String(ev.AccountID))
	}
	return attrs
}

// setError marks span failed by err: its code, and its message unless it
// is internal (which may quote the database).
func setError(span trace.Span, err error) {
	span.SetAttributes(semconv.ErrorTypeKey.String(webhooks.ErrorCode(err)))
	span.SetStatus(codes.Error, webhooks.ErrorMessage(err))
}

// Batch is the span of a batch of registrations; its zero value does
// nothing.
type Batch struct{ span trace.Span }

// StartBatch starts the span of a batch of n events, the parent of their
// registrations' spans.
func (t *Tracing) StartBatch(ctx context.Context, n int) (context.Context, Batch) {
	if t == nil {
		return ctx, Batch{}
	}
	ctx, span := t.tracer.Start(ctx, BatchSpan, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(BatchSizeKey.Int(n)))
	return ctx, Batch{span}
}

// End ends the batch's span: refused events, or the error that refused
// the whole batch.
func (b Batch) End(refused int, err error) {
	if b.span == nil {
		return
	}
	if err != nil {
		setError(b.span, err)
	} else {
		b.span.SetAttributes(BatchRefusedKey.Int(refused))
	}
	b.span.End()
}

// Attempt is the span of one attempt; its zero value does nothing.
type Attempt struct{ span trace.Span }

// StartAttempt starts the span of an attempt of c's delivery, begun at
// start. It is the root of a trace of its own (the attempt happens later,
// perhaps in another process), linked to the span that registered the
// event, if c carries its traceparent.
//
// The span is not put in the attempt's context: nothing of it may reach
// the request to the customer's receiver.
func (t *Tracing) StartAttempt(c *webhooks.Claim, start time.Time) Attempt {
	if t == nil {
		return Attempt{}
	}
	d := c.Delivery
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
		trace.WithAttributes(
			DeliveryIDKey.String(d.ID), EventIDKey.String(d.EventID), EventTypeKey.String(d.EventType),
			EndpointIDKey.String(d.EndpointID), AttemptNumberKey.Int(d.AttemptCount+1), AttemptManualKey.Bool(d.Manual),
			semconv.HTTPRequestMethodPost,
		),
	}
	if host := hostOf(c.Endpoint.URL); host != "" {
		opts = append(opts, trace.WithAttributes(semconv.ServerAddress(host)))
	}
	if sc := ParseTraceparent(c.Traceparent); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	_, span := t.tracer.Start(context.Background(), AttemptSpan, opts...)
	return Attempt{span}
}

// hostOf is the host of an endpoint's URL: never its path or query, which
// may hold a customer's token.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// End ends the span with the attempt's record and outcome, at end.
func (a Attempt) End(rec *webhooks.AttemptRecord, outcome webhooks.Outcome, end time.Time) {
	if a.span == nil {
		return
	}
	at := rec.Attempt
	if at.ResponseStatus != 0 {
		a.span.SetAttributes(semconv.HTTPResponseStatusCode(at.ResponseStatus))
	}
	a.span.SetAttributes(OutcomeKey.String(outcomeName(outcome)), DeliveryStatusKey.String(rec.Transition.Status))
	if outcome != webhooks.OutcomeDelivered {
		a.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(outcome, at)))
		a.span.SetStatus(codes.Error, at.Error)
	}
	a.span.End(trace.WithTimestamp(end))
}

// Abort ends the span of an attempt that shutdown aborted: its delivery
// is handed back, and attempted again later.
func (a Attempt) Abort() {
	if a.span == nil {
		return
	}
	a.span.SetAttributes(OutcomeKey.String("aborted"))
	a.span.SetStatus(codes.Error, "aborted by shutdown: the delivery is handed back")
	a.span.End()
}

func outcomeName(o webhooks.Outcome) string {
	switch o {
	case webhooks.OutcomeDelivered:
		return "delivered"
	case webhooks.OutcomeRetry:
		return "retry"
	case webhooks.OutcomeRejected:
		return "rejected"
	case webhooks.OutcomeRefused:
		return "refused"
	}
	return "unknown"
}

// errorType is error.type of a failed attempt: the status that failed
// it, as the HTTP conventions say, or why no usable answer came.
func errorType(o webhooks.Outcome, at *webhooks.Attempt) string {
	switch {
	case o == webhooks.OutcomeRefused:
		return webhooks.ReasonAddressNotAllowed
	case at.ResponseStatus >= 300:
		return strconv.Itoa(at.ResponseStatus)
	case at.ResponseStatus != 0:
		return "incomplete_answer" // a 2xx whose body broke off
	}
	return "no_answer"
}
