// Command goreceiver is the Go kit's example receiver: the program that
// kits/README.md asks of every kit, written as a customer would write it with
// the receiver package. The end-to-end test in kits/e2e starts it against the
// real `webhooks serve`, beside the Node, Python and PHP examples.
//
// It reads PORT, WEBHOOK_SECRETS (comma-separated, new first),
// WEBHOOK_SCHEME (any, factuarea or standard) and DATABASE_URL (sqlite:<path>,
// postgres://… or mysql://…), creates processed_webhook_events and
// webhook_effects, serves the kit's handler at POST /webhooks, prints
// "listening on 127.0.0.1:<PORT>" when it accepts requests, and exits on
// SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/factuarea/webhooks/receiver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Getenv)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "goreceiver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	port := getenv("PORT")
	if port == "" {
		return errors.New("PORT is required")
	}
	var secrets []string
	for s := range strings.SplitSeq(getenv("WEBHOOK_SECRETS"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			secrets = append(secrets, s)
		}
	}
	db, dialect, err := openDatabase(getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer db.Close()

	cfg := receiver.Config{
		DB:      db,
		Secrets: secrets,
		Handle:  recordEffect(dialect),
		Dialect: dialect,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if err := setScheme(&cfg, getenv("WEBHOOK_SCHEME")); err != nil {
		return err
	}
	h, err := receiver.New(cfg)
	if err != nil {
		return err
	}
	if err := h.CreateTable(ctx); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, createEffects); err != nil {
		return fmt.Errorf("create webhook_effects: %w", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks", h) // every method: the kit answers 405 itself
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// The test waits for this line: from here on, requests are accepted.
	fmt.Printf("listening on 127.0.0.1:%s\n", port)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Requests in flight get a moment to finish. Shutdown would also wait
	// up to 5 s for a connection the sender opened and has not used yet
	// (an HTTP client dials spares), so it is cut short and the rest closed:
	// the sender retries a request cut off, and the kit deduplicates the
	// retry if the first copy had committed.
	shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	return nil
}
