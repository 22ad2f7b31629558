package tracing

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/build"
)

// otelVars are the variables the tests set; each test starts with none of
// them, whatever the environment it runs in.
var otelVars = []string{
	"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_PROPAGATORS",
}

// setEnv clears otelVars and sets env for the test.
func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, name := range otelVars {
		t.Setenv(name, "") // restored when the test ends
		os.Unsetenv(name)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// TestReadEnv: tracing is off unless an OTLP endpoint or the exporter is
// set; the protocol defaults to http/protobuf, the traces variable winning
// over the general one; a value FromEnv cannot use is an error naming its
// variable.
func TestReadEnv(t *testing.T) {
	for _, tc := range []struct {
		env                map[string]string
		exporter, protocol string
		err                string // a part of the error; empty: none
	}{
		{env: nil, exporter: "none"},
		{env: map[string]string{"OTEL_SERVICE_NAME": "hooks"}, exporter: "none"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, exporter: "otlp", protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/v1/traces"}, exporter: "otlp", protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, exporter: "otlp", protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "OTLP"}, exporter: "otlp", protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, exporter: "none"},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, exporter: "none"},
		{env: map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, exporter: "otlp", protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, exporter: "otlp", protocol: "grpc"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, exporter: "otlp", protocol: "http/json"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}, exporter: "otlp", protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "always_off"}, exporter: "otlp", protocol: "http/protobuf"},

		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin"`},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, err: "OTEL_TRACES_EXPORTER"},
		{env: map[string]string{"OTEL_SDK_DISABLED": "yes"}, err: "OTEL_SDK_DISABLED"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, err: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://collector"}, err: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/?token=x"}, err: "no query string"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "sometimes"}, err: "OTEL_TRACES_SAMPLER"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, err: "OTEL_TRACES_SAMPLER_ARG"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "ten percent"}, err: "OTEL_TRACES_SAMPLER_ARG"},
	} {
		cfg, err := readEnv(func(name string) string { return tc.env[name] })
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: got %+v, %v; want an error about %s", tc.env, cfg, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case tc.err == "" && (cfg.exporter != tc.exporter || (tc.exporter == "otlp" && cfg.protocol != tc.protocol)):
			t.Errorf("%v: got exporter %q protocol %q, want %q %q", tc.env, cfg.exporter, cfg.protocol, tc.exporter, tc.protocol)
		}
	}
}

// TestReadEnv_Propagators: OTEL_PROPAGATORS is a comma-separated list of
// tracecontext and baggage, tracecontext,baggage by default, or none; a
// propagator of the specification this build does not have, an unknown
// name and none beside another are errors that name the variable and the
// value. Tracing off, it is not read.
func TestReadEnv_Propagators(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  []string // nil: none
		err   string   // a part of the error; empty: none
	}{
		{value: "", want: []string{"tracecontext", "baggage"}},
		{value: "tracecontext", want: []string{"tracecontext"}},
		{value: "baggage", want: []string{"baggage"}},
		{value: "baggage,tracecontext", want: []string{"baggage", "tracecontext"}},
		{value: " TraceContext , Baggage ", want: []string{"tracecontext", "baggage"}},
		{value: "tracecontext,,tracecontext", want: []string{"tracecontext"}},
		{value: ",", want: []string{"tracecontext", "baggage"}},
		{value: "none", want: nil},
		{value: "None,none", want: nil},

		{value: "b3", err: `OTEL_PROPAGATORS="b3": this service does not have the b3 propagator, only tracecontext and baggage`},
		{value: "tracecontext,b3multi", err: "does not have the b3multi propagator"},
		{value: "jaeger", err: "does not have the jaeger propagator"},
		{value: "xray", err: "does not have the xray propagator"},
		{value: "ottrace,baggage", err: "does not have the ottrace propagator"},
		{value: "tracecontxt", err: `OTEL_PROPAGATORS="tracecontxt": "tracecontxt" is not a propagator`},
		{value: "w3c", err: `"w3c" is not a propagator`},
		{value: "none,tracecontext", err: "none turns propagation off, and cannot be listed beside tracecontext"},
	} {
		env := map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_PROPAGATORS": tc.value}
		cfg, err := readEnv(func(name string) string { return env[name] })
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("OTEL_PROPAGATORS=%q: got %v, %v; want an error saying %s", tc.value, cfg.propagators, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("OTEL_PROPAGATORS=%q: %v", tc.value, err)
		case tc.err == "" && !slices.Equal(cfg.propagators, tc.want):
			t.Errorf("OTEL_PROPAGATORS=%q: got %q, want %q", tc.value, cfg.propagators, tc.want)
		}
	}
	// Tracing off reads no request: the variable is not checked.
	if cfg, err := readEnv(func(name string) string { return map[string]string{"OTEL_PROPAGATORS": "b3"}[name] }); err != nil || cfg.exporter != "none" {
		t.Errorf("OTEL_PROPAGATORS=b3 with tracing off: got %+v, %v; want tracing off, no error", cfg, err)
	}
}

// TestFromEnv_Propagators: what Extract reads of a request that carries
// traceparent and baggage, as OTEL_PROPAGATORS says: both by default,
// one of them, or nothing with none; and a propagator this build does not
// have stops FromEnv with an error that names it.
func TestFromEnv_Propagators(t *testing.T) {
	const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	h := http.Header{"Traceparent": {incoming}, "Baggage": {"tenant=acme"}}
	for _, tc := range []struct {
		value          string
		trace, baggage bool
	}{
		{"", true, true},
		{"tracecontext,baggage", true, true},
		{"tracecontext", true, false},
		{"baggage", false, true},
		{"none", false, false},
	} {
		srv := httptest.NewServer(&collector{})
		setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_PROPAGATORS": tc.value})
		tr, err := FromEnv(t.Context(), nil)
		if err != nil || tr == nil {
			t.Fatalf("OTEL_PROPAGATORS=%q: FromEnv: got %v, %v; want tracing on", tc.value, tr, err)
		}
		ctx := tr.Extract(t.Context(), h)
		sc := trace.SpanContextFromContext(ctx)
		gotTrace := sc.IsValid() && sc.TraceID().String() == incoming[3:35]
		gotBaggage := baggage.FromContext(ctx).Member("tenant").Value() == "acme"
		if gotTrace != tc.trace || gotBaggage != tc.baggage {
			t.Errorf("OTEL_PROPAGATORS=%q: got the traceparent %t, the baggage %t; want %t and %t", tc.value, gotTrace, gotBaggage, tc.trace, tc.baggage)
		}
		if plain := t.Context(); tr.Extract(plain, http.Header{"Tracestate": {"k=v"}}) != plain {
			t.Errorf("OTEL_PROPAGATORS=%q: a request with no traceparent nor baggage changed the context", tc.value)
		}
		tr.Shutdown(t.Context())
		srv.Close()
	}
	setEnv(t, map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_PROPAGATORS": "tracecontext,b3"})
	if tr, err := FromEnv(t.Context(), nil); err == nil || !strings.Contains(err.Error(), `OTEL_PROPAGATORS="tracecontext,b3": this service does not have the b3 propagator`) {
		t.Errorf("OTEL_PROPAGATORS=tracecontext,b3: got %v, %v; want an error naming b3", tr, err)
	}
}

// TestFromEnv_Off: without OTEL_* variables there is no tracing, and what
// the service calls of it does nothing.
func TestFromEnv_Off(t *testing.T) {
	setEnv(t, nil)
	tr, err := FromEnv(t.Context(), nil)
	if err != nil || tr != nil {
		t.Fatalf("FromEnv without OTEL_*: got %v, %v; want nil (off)", tr, err)
	}
	if tr.Enabled() {
		t.Error("Enabled: got true")
	}
	ctx := t.Context()
	h := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	if got := tr.Extract(ctx, h); got != ctx {
		t.Error("Extract with tracing off changed the context")
	}
	_, reg := tr.StartRegistration(ctx, false)
	ev := &webhooks.Event{ID: webhooks.NewID(), Type: "invoice.sent"}
	reg.Event(ev)
	reg.End(ev, 1, true, nil)
	if ev.Traceparent != "" {
		t.Errorf("tracing off gave the event traceparent %q", ev.Traceparent)
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// collector is an OTLP receiver over HTTP (protobuf or JSON) and gRPC that
// keeps the spans it is sent.
type collector struct {
	mu          sync.Mutex
	spans       []*tracepb.Span
	resources   []map[string]string
	contentType string
	userAgent   string
	header      string // the x-tenant header, set by OTEL_EXPORTER_OTLP_HEADERS
}

func (c *collector) add(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		attrs := map[string]string{}
		for _, kv := range rs.Resource.GetAttributes() {
			attrs[kv.Key] = kv.Value.GetStringValue()
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, s)
				c.resources = append(c.resources, attrs)
			}
		}
	}
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP traces request", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		err = protojson.Unmarshal(body, &req)
	} else {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.contentType, c.userAgent, c.header = ct, r.Header.Get("User-Agent"), r.Header.Get("X-Tenant")
	c.mu.Unlock()
	c.add(&req)
	w.Header().Set("Content-Type", ct)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	if ct == "application/json" {
		out, _ = protojson.Marshal(&coltracepb.ExportTraceServiceResponse{})
	}
	w.Write(out)
}

// grpcCollector is the collector as a gRPC trace service.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	c *collector
}

func (g grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.c.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// exportSpans makes a registration's span and an attempt's span with the
// tracing FromEnv configures, shuts it down (which exports them), and
// returns the event registered.
func exportSpans(t *testing.T) *webhooks.Event {
	t.Helper()
	tr, err := FromEnv(t.Context(), nil)
	if err != nil || tr == nil {
		t.Fatalf("FromEnv: got %v, %v; want tracing on", tr, err)
	}
	_, reg := tr.StartRegistration(t.Context(), false)
	ev := &webhooks.Event{ID: webhooks.NewID(), Type: "invoice.sent", AccountID: webhooks.NewID(), CompanyID: webhooks.NewID()}
	reg.Event(ev)
	reg.End(ev, 1, true, nil)
	d := &webhooks.Delivery{ID: webhooks.NewID(), EventID: ev.ID, EventType: ev.Type, EndpointID: webhooks.NewID()}
	start := time.Now()
	att := tr.StartAttempt(&webhooks.Claim{Delivery: d, Endpoint: &webhooks.Endpoint{ID: d.EndpointID, URL: "https://hooks.example.com/in?token=secret"}, Traceparent: ev.Traceparent}, start)
	att.End(&webhooks.AttemptRecord{Attempt: &webhooks.Attempt{Number: 1, ResponseStatus: 204}, Transition: webhooks.Transition{Status: webhooks.DeliveryDelivered}},
		webhooks.OutcomeDelivered, start.Add(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	return ev
}

// checkExported checks that c got the two spans exportSpans makes, of
// service webhooks (or wantService), the attempt linked to the
// registration.
func checkExported(t *testing.T, c *collector, ev *webhooks.Event, wantService string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.spans) != 2 {
		t.Fatalf("the collector got %d spans, want 2", len(c.spans))
	}
	reg, att := c.spans[0], c.spans[1]
	if reg.Name != RegisterSpan || att.Name != AttemptSpan {
		t.Errorf("spans: got %q and %q, want %q and %q", reg.Name, att.Name, RegisterSpan, AttemptSpan)
	}
	if got := c.resources[0]["service.name"]; got != wantService {
		t.Errorf("service.name: got %q, want %q", got, wantService)
	}
	if got := c.resources[0]["service.version"]; got != build.Version() {
		t.Errorf("service.version: got %q, want the build's, %q", got, build.Version())
	}
	if got := spanAttr(reg, string(EventIDKey)); got != ev.ID {
		t.Errorf("the registration's %s: got %q, want %q", EventIDKey, got, ev.ID)
	}
	if len(att.Links) != 1 || string(att.Links[0].SpanId) != string(reg.SpanId) || string(att.Links[0].TraceId) != string(reg.TraceId) {
		t.Errorf("the attempt's links: got %v, want one to the registration's span", att.Links)
	}
	if got := spanAttr(att, "server.address"); got != "hooks.example.com" {
		t.Errorf("the attempt's server.address: got %q, want the endpoint's host alone", got)
	}
	for _, s := range c.spans {
		for _, kv := range s.Attributes {
			if v := kv.Value.GetStringValue(); strings.Contains(v, "token") || strings.Contains(v, "/in") {
				t.Errorf("span %s exports %s=%q, from the endpoint's URL", s.Name, kv.Key, v)
			}
		}
	}
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestFromEnv_OTLPHTTP: with an OTLP endpoint set, spans are exported as
// OTLP/HTTP protobuf (or JSON, as the protocol says) to it, with the
// resource and headers the variables set, when the tracing shuts down.
func TestFromEnv_OTLPHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, protocol, contentType string
	}{
		{"protobuf", "", "application/x-protobuf"},
		{"json", "http/json", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &collector{}
			srv := httptest.NewServer(c)
			defer srv.Close()
			setEnv(t, map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT":        srv.URL,
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": tc.protocol,
				"OTEL_RESOURCE_ATTRIBUTES":           "deployment.environment.name=test",
				"OTEL_EXPORTER_OTLP_HEADERS":         "x-tenant=factuarea",
			})
			ev := exportSpans(t)
			if ev.Traceparent == "" {
				t.Error("a sampled registration gave its event no traceparent")
			}
			checkExported(t, c, ev, DefaultServiceName)
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.contentType != tc.contentType || c.header != "factuarea" {
				t.Errorf("request: Content-Type %q, X-Tenant %q; want %q and factuarea", c.contentType, c.header, tc.contentType)
			}
			if got := c.resources[0]["deployment.environment.name"]; got != "test" {
				t.Errorf("resource from OTEL_RESOURCE_ATTRIBUTES: got %q, want test", got)
			}
		})
	}
	t.Run("ServiceName", func(t *testing.T) {
		c := &collector{}
		srv := httptest.NewServer(c)
		defer srv.Close()
		setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/v1/traces", "OTEL_SERVICE_NAME": "hooks-eu"})
		checkExported(t, c, exportSpans(t), "hooks-eu")
	})
	// The sampler comes from the SDK's variables: sampled out, nothing is
	// exported, and the event gets no traceparent to store.
	t.Run("SampledOut", func(t *testing.T) {
		c := &collector{}
		srv := httptest.NewServer(c)
		defer srv.Close()
		setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_TRACES_SAMPLER": "always_off"})
		ev := exportSpans(t)
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.spans) != 0 || ev.Traceparent != "" {
			t.Errorf("always_off: %d spans exported, traceparent %q; want none", len(c.spans), ev.Traceparent)
		}
	})
}

// TestFromEnv_OTLPGRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports to an
// OTLP/gRPC collector.
func TestFromEnv_OTLPGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcCollector{c: c})
	go srv.Serve(ln)
	defer srv.Stop()
	setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
	checkExported(t, c, exportSpans(t), DefaultServiceName)
}
