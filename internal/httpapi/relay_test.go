package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/httpapi"
	"github.com/factuarea/webhooks/internal/relay"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/storetest"
)

// TestRelay_Stream: the listener's stream outlives the server's read and
// write timeouts (it lasts while the listener is connected), says when it
// holds the endpoint, keeps alive, and carries a request whose answer,
// posted back, is what the attempt gets.
func TestRelay_Stream(t *testing.T) {
	const adminKey = "relay-stream-admin-key"
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "relay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	store := storetest.Stack(t, st)
	hub := relay.New(relay.Config{Store: store, Renew: 200 * time.Millisecond})
	a := app.New(app.Config{Store: store, Registrar: store, AdminKey: adminKey, Relay: hub})
	api := &httpapi.Server{App: a}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api.Handler(), ReadTimeout: time.Second, WriteTimeout: time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()

	acct := storetest.MustCreateAccount(t, store, "")
	ep := storetest.MustCreateEndpoint(t, store, storetest.NewRelayEndpoint(acct.ID, "*"))
	path := "/v1/accounts/" + acct.ID + "/webhook_endpoints/" + ep.ID + "/relay"
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("GET relay: got %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l map[string]any
			json.Unmarshal(sc.Bytes(), &l)
			lines <- l
		}
		close(lines)
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			return l
		case <-time.After(5 * time.Second):
			t.Fatal("no line")
		}
		return nil
	}
	if l := next(); l["type"] != "connected" || l["endpoint_id"] != ep.ID {
		t.Fatalf("first line: got %v, want connected", l)
	}
	// Past both timeouts, the stream goes on.
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if l := next(); l["type"] != "ping" {
			t.Fatalf("got %v, want pings", l)
		}
	}

	body := []byte(`{"id":"evt","n":"é"}`)
	got := make(chan *webhooks.RelayAnswer, 1)
	go func() {
		a, err := hub.Exchange(t.Context(), ep.ID, webhooks.NewID(), map[string][]string{"Factuarea-Signature": {"t=1,v1=ab"}}, body)
		if err != nil {
			t.Errorf("Exchange: %v", err)
		}
		got <- a
	}()
	var l map[string]any
	for l = next(); l["type"] == "ping"; l = next() {
	}
	if l["type"] != "request" || l["body"] != "eyJpZCI6ImV2dCIsIm4iOiLDqSJ9" || !strings.Contains(l["id"].(string), "-") {
		t.Fatalf("request line: got %v, want the body in base64", l)
	}
	answer := `{"request_id": "` + l["id"].(string) + `", "status": 201, "duration_ms": 7, "body": "ok"}`
	post, _ := http.NewRequest("POST", base+path+"/answers", strings.NewReader(answer))
	post.Header.Set("Authorization", "Bearer "+adminKey)
	presp, err := http.DefaultClient.Do(post)
	if err != nil || presp.StatusCode != 204 {
		t.Fatalf("POST answers: got %v %v, want 204", presp.StatusCode, err)
	}
	presp.Body.Close()
	if a := <-got; a == nil || a.Status != 201 || a.Duration != 7*time.Millisecond || a.Body != "ok" {
		t.Errorf("the attempt got %+v, want the posted answer", a)
	}
}
