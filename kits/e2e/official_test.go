package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// A library is an official Standard Webhooks library, as a receiver that
// verifies each delivery with every secret on its own and answers 200
// "verified by secrets 0,1" (the indexes of those that verify), or 401.
type library struct {
	name string
	// start starts the receiver on port; the caller stops it.
	start func(t *testing.T, port int, secrets []string) stopper
}

type stopper interface{ stop(t *testing.T) }

var libraries = []library{
	{name: "go", start: startGoLibrary},
	{name: "npm", start: startNPMLibrary},
}

// TestStandardWebhooksLibraries: the official Standard Webhooks libraries,
// the Go module and the npm package, verify what `webhooks serve` delivers
// to an endpoint with standard_webhooks, during a rotation too. Each secret
// verifies on its own: during the overlap both the new and the old secret
// verify the same delivery (webhook-signature carries one v1 per live
// secret), and once a second rotation ends the first secret, it no longer
// does.
func TestStandardWebhooksLibraries(t *testing.T) {
	t.Parallel()
	s := startService(t)
	var wg sync.WaitGroup
	for _, lib := range libraries {
		wg.Go(func() { t.Run(lib.name, func(t *testing.T) { runLibrary(t, s, lib) }) })
	}
	wg.Wait()
}

func runLibrary(t *testing.T, s *service, lib library) {
	ten := s.newTenant(t, int(tenants.Add(1)))
	ep := s.createEndpoint(t, "/v1/companies/"+ten.company, object{
		"url": "http://127.0.0.1:9/webhooks", "enabled_events": []string{"invoice.*"}, "standard_webhooks": true,
	})
	var rcv stopper
	t.Cleanup(func() {
		if rcv != nil {
			rcv.stop(t)
		}
	})
	// deliver (re)starts the receiver with secrets, registers an event and
	// checks which secrets verified its delivery.
	deliver := func(secrets []string, want string) {
		t.Helper()
		if rcv != nil {
			rcv.stop(t)
		}
		port := freePort(t)
		s.call(t, "PATCH", ep.path, object{"url": "http://127.0.0.1:" + strconv.Itoa(port) + "/webhooks"}, 200, nil)
		rcv = lib.start(t, port, secrets)
		id := s.event(t, object{"type": "invoice.sent", "company_id": ten.company,
			"data": object{"object": object{"object": "invoice", "id": "inv_" + lib.name, "total": "1210.00"}}})
		d := s.attempted(t, ep, id)
		if d.Status != "delivered" || strings.TrimSpace(d.Attempts[0].ResponseBody) != want {
			t.Fatalf("%d live secrets, the receiver given %d: got %s, want delivered and %q", len(ep.secrets), len(secrets), d, want)
		}
	}
	first := ep.secrets[0]
	deliver([]string{first}, "verified by secrets 0")
	s.rotate(t, ep)
	deliver(ep.secrets, "verified by secrets 0,1")
	s.rotate(t, ep) // ends the first secret at once
	deliver(append(ep.secrets, first), "verified by secrets 0,1")
}

// startNPMLibrary runs kits/e2e/node/server.js, which verifies with the npm
// package standardwebhooks.
func startNPMLibrary(t *testing.T, port int, secrets []string) stopper {
	t.Helper()
	if err := lookPath("node", aptNode); err != nil {
		t.Fatal(err)
	}
	if err := nodeModules("kits/e2e/node", "kits/e2e/node", "standardwebhooks"); err != nil {
		t.Fatal(err)
	}
	return startReceiver(t, "standardwebhooks (npm)", []string{"node", "kits/e2e/node/server.js"},
		[]string{"WEBHOOK_SECRETS=" + strings.Join(secrets, ",")}, port, nil)
}

// goLibrary serves the Go module's verification in the test's process.
type goLibrary struct {
	srv  *http.Server
	done chan struct{}
}

func startGoLibrary(t *testing.T, port int, secrets []string) stopper {
	t.Helper()
	var hooks []*standardwebhooks.Webhook
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatalf("the Go library refuses the secret: %v", err)
		}
		hooks = append(hooks, wh)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	g := &goLibrary{done: make(chan struct{})}
	g.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var verified, failures []string
		for i, wh := range hooks {
			if err := wh.Verify(body, r.Header); err != nil {
				failures = append(failures, fmt.Sprintf("secret %d: %v", i, err))
				continue
			}
			verified = append(verified, strconv.Itoa(i))
		}
		if len(verified) == 0 {
			http.Error(w, "no secret verifies: "+strings.Join(failures, "; "), http.StatusUnauthorized)
			return
		}
		var ev struct{ ID string }
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID != r.Header.Get(standardwebhooks.HeaderWebhookID) {
			http.Error(w, fmt.Sprintf("webhook-id %s is not the event id %s", r.Header.Get(standardwebhooks.HeaderWebhookID), ev.ID), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "verified by secrets %s\n", strings.Join(verified, ","))
	})}
	go func() {
		defer close(g.done)
		if err := g.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "kits/e2e: the Go library's receiver:", err)
		}
	}()
	return g
}

func (g *goLibrary) stop(*testing.T) {
	g.srv.Close()
	<-g.done
}
