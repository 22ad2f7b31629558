package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/factuarea/webhooks/internal/build"
)

// DefaultServiceName is service.name unless OTEL_SERVICE_NAME (or
// service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const DefaultServiceName = "webhooks"

// FromEnv returns the tracing the standard OTEL_* variables of the
// process's environment configure, or nil: tracing off, the default.
//
//   - OTEL_TRACES_EXPORTER: otlp or none. Unset, it is otlp when an OTLP
//     endpoint is set and none otherwise. OTEL_SDK_DISABLED=true turns
//     tracing off whatever it says.
//   - OTEL_EXPORTER_OTLP_ENDPOINT (the base URL, /v1/traces appended for
//     HTTP) or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the URL as it is);
//     unset, the SDK's default, localhost:4318 (4317 for grpc).
//   - OTEL_EXPORTER_OTLP_PROTOCOL or OTEL_EXPORTER_OTLP_TRACES_PROTOCOL:
//     http/protobuf (the default), http/json or grpc.
//   - OTEL_SERVICE_NAME (default webhooks) and OTEL_RESOURCE_ATTRIBUTES.
//   - OTEL_PROPAGATORS: what is read of the platform's requests, a
//     comma-separated list of tracecontext and baggage (the default is
//     both, as OpenTelemetry's), or none, which reads nothing (the
//     registrations start traces of their own). The other propagators of
//     the specification (b3, b3multi, jaeger, xray, ottrace) are not in
//     this build, and naming one is an error rather than a propagator
//     quietly left out, after which every registration would start a
//     trace of its own.
//   - OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (default
//     parentbased_always_on), OTEL_BSP_*, and the exporter's
//     OTEL_EXPORTER_OTLP_* headers, timeout, compression and TLS files,
//     which the SDK reads itself.
//
// A value it cannot use is an error that names the variable, instead of
// the SDK's fallback to a default, so that a mistyped setting does not
// quietly send traces elsewhere or none. The exporter's errors once it
// runs (a collector down) are logged to logger, without stopping
// anything: spans are dropped, never the service's work.
func FromEnv(ctx context.Context, logger *slog.Logger) (*Tracing, error) {
	cfg, err := readEnv(os.Getenv)
	if err != nil || cfg.exporter == "none" {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName), semconv.ServiceVersion(build.Version())),
		resource.WithFromEnv(), // last: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	var exp sdktrace.SpanExporter
	if cfg.protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx) // http/protobuf or http/json, as the variable says
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	if logger != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			logger.Warn("tracing: exporting spans failed; they are dropped", "err", err)
		}))
	}
	// The sampler is the SDK's from OTEL_TRACES_SAMPLER (checked above).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := New(tp)
	t.shutdown = tp.Shutdown
	t.setPropagators(cfg.propagators)
	return t, nil
}

// envConfig is what FromEnv decides itself; the SDK reads the rest.
type envConfig struct {
	exporter    string   // otlp or none
	protocol    string   // http/protobuf, http/json or grpc
	propagators []string // tracecontext, baggage; none when empty
}

// readEnv reads and checks the settings of FromEnv from getenv.
func readEnv(getenv func(string) string) (envConfig, error) {
	var cfg envConfig
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	if v := get("OTEL_SDK_DISABLED"); v != "" {
		disabled, err := strconv.ParseBool(v)
		if err != nil {
			return cfg, fmt.Errorf("OTEL_SDK_DISABLED=%q: use true or false", v)
		}
		if disabled {
			cfg.exporter = "none"
			return cfg, nil
		}
	}
	endpoints := false
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		v := get(name)
		if v == "" {
			continue
		}
		endpoints = true
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cfg, fmt.Errorf("%s=%q: use an http or https URL, such as http://localhost:4318", name, v)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return cfg, fmt.Errorf("%s=%q: the URL takes no query string or fragment", name, v)
		}
	}
	switch v := strings.ToLower(get("OTEL_TRACES_EXPORTER")); v {
	case "":
		cfg.exporter = "none"
		if endpoints {
			cfg.exporter = "otlp"
		}
	case "otlp", "none":
		cfg.exporter = v
	default:
		return cfg, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: this service exports traces with otlp, or none (the default without an OTLP endpoint)", v)
	}
	cfg.protocol = "http/protobuf"
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} { // the second wins
		switch v := get(name); v {
		case "":
		case "http/protobuf", "http/json", "grpc":
			cfg.protocol = v
		default:
			return cfg, fmt.Errorf("%s=%q: use http/protobuf, http/json or grpc", name, v)
		}
	}
	if cfg.exporter == "otlp" {
		if err := checkSampler(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG")); err != nil {
			return cfg, err
		}
		var err error
		if cfg.propagators, err = readPropagators(get("OTEL_PROPAGATORS")); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// readPropagators reads OTEL_PROPAGATORS as the OpenTelemetry
// specification writes it: a comma-separated list, each name once
// (repeats are dropped, empty entries skipped, case ignored), unset or
// empty for the default, DefaultPropagators; none for no propagator
// (alone: beside another name it contradicts it). It returns the names in
// the order given, or none for none.
func readPropagators(v string) ([]string, error) {
	var names []string
	none := false
	for _, entry := range strings.Split(v, ",") {
		switch name := strings.ToLower(strings.TrimSpace(entry)); name {
		case "":
		case "none":
			none = true
		case "tracecontext", "baggage":
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		case "b3", "b3multi", "jaeger", "xray", "ottrace":
			return nil, fmt.Errorf("OTEL_PROPAGATORS=%q: this service does not have the %s propagator, only tracecontext and baggage: "+
				"list those (the default is both) or none, and have the platform send W3C traceparent headers to join its traces", v, name)
		default:
			return nil, fmt.Errorf("OTEL_PROPAGATORS=%q: %q is not a propagator: use tracecontext and baggage (the default is both), or none", v, name)
		}
	}
	switch {
	case none && len(names) > 0:
		return nil, fmt.Errorf("OTEL_PROPAGATORS=%q: none turns propagation off, and cannot be listed beside %s", v, strings.Join(names, " and "))
	case none:
		return nil, nil
	case len(names) == 0:
		return slices.Clone(DefaultPropagators), nil
	}
	return names, nil
}

// checkSampler checks the sampler settings the SDK reads, which on its own
// would log a bad one and sample everything.
func checkSampler(name, arg string) error {
	switch strings.ToLower(name) {
	case "", "always_on", "always_off", "parentbased_always_on", "parentbased_always_off":
		return nil
	case "traceidratio", "parentbased_traceidratio":
		if arg == "" {
			return nil // a ratio of 1
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: the %s sampler takes a ratio from 0 to 1, such as 0.1", arg, name)
		}
		return nil
	}
	return errors.New("OTEL_TRACES_SAMPLER=" + strconv.Quote(name) + ": use always_on, always_off, traceidratio, " +
		"parentbased_always_on (the default), parentbased_always_off or parentbased_traceidratio")
}
