package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// ListenCommand is `webhooks listen`, in one of two modes.
//
// With --forward-to it is the local relay (SPEC 20): it connects out to
// the service, creates (or, with --endpoint, resumes) a relay endpoint of
// a company or an account, and POSTs each of its deliveries to the
// --forward-to URL, reporting the answer back as the attempt's outcome.
//
// Without it, it is a receiver for trying the service out: it prints
// every delivery it gets (headers and body), checks the signature when
// given the endpoint's secret, and answers --status.
type ListenCommand struct {
	Out    io.Writer
	Stderr io.Writer
	// Listening, if set, receives the bound address (receiver mode).
	Listening func(addr string)
}

// Run parses args and receives (or relays) until ctx ends.
func (c *ListenCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on (receiver mode)")
	var secrets secretsFlag
	fs.Var(&secrets, "secret", "an endpoint secret to verify signatures with (repeatable; receiver mode)")
	status := fs.Int("status", 200, "the status to answer with (receiver mode; try 500 to watch retries)")
	var r relayer
	fs.StringVar(&r.forwardTo, "forward-to", "", "relay mode: the local URL to POST each delivery to, such as http://localhost:3000/webhooks")
	fs.StringVar(&r.api, "api", "", "relay mode: the service's URL, such as https://hooks.example.com")
	fs.StringVar(&r.key, "key", "", "relay mode: the account key (when not given: $WEBHOOKS_API_KEY)")
	fs.StringVar(&r.company, "company", "", "relay mode: the company whose events to relay")
	fs.StringVar(&r.account, "account", "", "relay mode: the account whose events to relay (instead of a company)")
	fs.StringVar(&r.events, "events", "*", "relay mode: the event types to relay, comma-separated patterns (invoice.*,account.updated)")
	fs.StringVar(&r.endpoint, "endpoint", "", "relay mode: resume this relay endpoint (one a killed listen left) instead of creating one")
	fs.BoolVar(&r.livemode, "livemode", true, "relay mode: relay live-mode events (false: test-mode ones)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("listen takes no arguments (got %q)", fs.Args())
	}
	if r.forwardTo != "" || r.api != "" {
		if r.key == "" {
			r.key = os.Getenv("WEBHOOKS_API_KEY")
		}
		r.out, r.stderr = c.Out, c.Stderr
		return r.run(ctx)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "Listening on http://%s/ (answering %d)\n", ln.Addr(), *status)
	if c.Listening != nil {
		c.Listening(ln.Addr().String())
	}
	var mu sync.Mutex
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s %s %s\n", time.Now().Format(time.TimeOnly), r.Method, r.URL.Path)
		names := make([]string, 0, len(r.Header))
		for name := range r.Header {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fmt.Fprintf(&b, "%s: %s\n", name, strings.Join(r.Header[name], ", "))
		}
		fmt.Fprintf(&b, "\n%s\n", body)
		if len(secrets) > 0 {
			if err := signature.Verify(r.Header.Get(signature.HeaderName), body, time.Now(), 0, secrets...); err != nil {
				fmt.Fprintf(&b, "signature: INVALID (%v)\n", err)
			} else {
				fmt.Fprintln(&b, "signature: valid")
			}
		}
		mu.Lock()
		io.WriteString(c.Out, b.String())
		mu.Unlock()
		w.WriteHeader(*status)
	})}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
