package app_test

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/tracing"
)

// BenchmarkRegisterEvent_TracingOn is BenchmarkRegisterEvent with tracing
// on: the request's traceparent extracted as the API does, every
// registration's span sampled and handed to an exporter that drops it,
// and its traceparent stored with the event.
func BenchmarkRegisterEvent_TracingOn(b *testing.B) {
	tr := tracing.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter()))))
	benchmarkRegisterEvent(b, app.Config{Tracing: tr}, tr.Extract)
}
