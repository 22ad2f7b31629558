package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpCollector is an OTLP/HTTP receiver that keeps the names and trace
// ids of the spans it is sent, and the service.version of their resources.
type otlpCollector struct {
	mu       sync.Mutex
	spans    map[string][]string // span name → trace ids
	versions []string            // service.version of each resource
	signal   chan struct{}
}

func newOTLPCollector(t *testing.T) (*otlpCollector, *httptest.Server) {
	c := &otlpCollector{spans: map[string][]string{}, signal: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP/HTTP protobuf traces request", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.version" {
					c.versions = append(c.versions, kv.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					c.spans[s.Name] = append(c.spans[s.Name], hex.EncodeToString(s.TraceId))
				}
			}
		}
		c.mu.Unlock()
		select {
		case c.signal <- struct{}{}:
		default:
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return c, srv
}

// serviceVersions returns the service.version of the resources received.
func (c *otlpCollector) serviceVersions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.versions...)
}

func (c *otlpCollector) names() map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for k, v := range c.spans {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// TestServe_Tracing: `webhooks serve` with an OTLP endpoint in the
// environment exports the spans of a registration, in the trace of the
// platform's request, and of its attempt, says tracing=otlp at start; a
// tracing setting it cannot use stops it with an error naming the
// variable.
func TestServe_Tracing(t *testing.T) {
	c, collector := newOTLPCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // ms: export at once, not every 5 s
	delivered := make(chan http.Header, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		delivered <- r.Header.Clone()
	}))
	defer receiver.Close()

	base, data, logs := serveInProcess(t, map[string]string{"WEBHOOKS_ALLOW_HTTP": "true", "WEBHOOKS_ALLOW_NETWORKS": "127.0.0.0/8"}, "-addr", "127.0.0.1:0")
	if line := startupLine(t, logs.String()); !strings.Contains(line, "tracing=otlp") {
		t.Errorf("start-up line %q: no tracing=otlp", line)
	}
	raw, err := os.ReadFile(filepath.Join(data, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(raw))
	p := &process{url: base}
	account := p.api(t, key, "POST", "/v1/accounts", map[string]any{"name": "Acme"}, 201)["id"].(string)
	company := p.api(t, key, "POST", "/v1/companies", map[string]any{"account_id": account, "nif": "B12345674", "name": "Acme SL"}, 201)["id"].(string)
	p.api(t, key, "POST", "/v1/companies/"+company+"/webhook_endpoints", map[string]any{"url": receiver.URL, "enabled_events": []string{"*"}}, 201)

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest("POST", base+"/v1/events", bytes.NewBufferString(`{"type": "invoice.sent", "company_id": "`+company+`", "data": {"object": {"id": "inv_1"}}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST /v1/events: got %d, want 201", resp.StatusCode)
	}
	select {
	case h := <-delivered:
		if h.Get("Traceparent") != "" || h.Get("Tracestate") != "" {
			t.Errorf("the receiver got traceparent %q, tracestate %q: want none", h.Get("Traceparent"), h.Get("Tracestate"))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery within 10 s")
	}
	deadline := time.After(10 * time.Second)
	for {
		got := c.names()
		if len(got["webhooks.register"]) == 1 && len(got["webhooks.attempt"]) == 1 {
			if got["webhooks.register"][0] != trace {
				t.Errorf("registration span in trace %s, want the platform's %s", got["webhooks.register"][0], trace)
			}
			break
		}
		select {
		case <-c.signal:
		case <-deadline:
			t.Fatalf("the collector got %v, want a registration and an attempt span", got)
		}
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	cmd := &ServeCommand{Out: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	err = cmd.Run(context.Background(), []string{"-data", t.TempDir(), "-addr", "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER") {
		t.Errorf("serve with OTEL_TRACES_EXPORTER=zipkin: got %v, want an error naming the variable", err)
	}
}
