package delivery

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/factuarea/webhooks/internal/tracing"
)

// BenchmarkAttempt_TracingOn is BenchmarkAttempt with every attempt's span
// sampled, linked and handed to an exporter that drops it: the cost of
// tracing on, without a collector's.
func BenchmarkAttempt_TracingOn(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
	benchmarkAttempt(b, Config{Tracing: tracing.New(tp)})
}
