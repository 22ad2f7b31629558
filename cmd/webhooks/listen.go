package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// ListenCommand is `webhooks listen`: a receiver for trying the service
// out. It prints every delivery it gets (headers and body), checks the
// signature when given the endpoint's secret, and answers 200.
type ListenCommand struct {
	Out    io.Writer
	Stderr io.Writer
	// Listening, if set, receives the bound address.
	Listening func(addr string)
}

// Run parses args and receives until ctx ends.
func (c *ListenCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on")
	var secrets secretsFlag
	fs.Var(&secrets, "secret", "an endpoint secret to verify signatures with (repeatable)")
	status := fs.Int("status", 200, "the status to answer with (try 500 to watch retries)")
	if err := fs.Parse(args); err != nil {
		return err
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
