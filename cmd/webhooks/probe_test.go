package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/factuarea/webhooks/internal/probe"
	"github.com/factuarea/webhooks/receiver"
)

func TestProbeCommand_FlagErrors(t *testing.T) {
	t.Setenv(probeSecretEnv, "")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no URL", []string{"--secret", "whsec_x"}, "--url is required"},
		{"no secret", []string{"--url", "http://127.0.0.1:1/webhook"}, "--secret is required"},
		{"bad URL", []string{"--url", "example.com/webhook", "--secret", "whsec_x"}, "not an http or https URL"},
		{"zero repeat", []string{"--url", "http://127.0.0.1:1/", "--secret", "whsec_x", "--repeat", "0"}, "must be positive"},
		{"argument", []string{"--url", "http://127.0.0.1:1/", "--secret", "whsec_x", "extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
		{"bad duration", []string{"--timeout", "ten"}, "invalid value"},
		{"old secret with --standard-webhooks", []string{"--url", "http://127.0.0.1:1/", "--secret", "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "--standard-webhooks"},
			"secret 1: signature: the secret is not standard base64 after whsec_: it was made before the secret format changed, so it cannot sign the Standard Webhooks headers, nor can the endpoint have them; rotate the endpoint's secret first (or probe without --standard-webhooks)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := (&ProbeCommand{Out: &out}).Run(context.Background(), tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestProbeCommand_Help(t *testing.T) {
	var out bytes.Buffer
	err := (&ProbeCommand{Out: &out}).Run(context.Background(), []string{"-h"})
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("got %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"duplicate", "signature", "stale", "body", "latency", "-url", "-secret", "-repeat", "-timeout", "-account", "-standard-webhooks"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage: got\n%s\nwant it to mention %q", out.String(), want)
		}
	}
}

// TestProbeCommand_Run probes a receiver built with the kit, the secret
// taken from the environment: it passes, and a wrong secret makes it fail.
func TestProbeCommand_Run(t *testing.T) {
	const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
	srv := kitServer(t, secret, receiver.SchemeAny)

	t.Setenv(probeSecretEnv, secret)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"probe", "--url", srv.URL, "--repeat", "3"}, &out, &out); err != nil {
		t.Errorf("got %v, want nil\n%s", err, &out)
	}
	if !strings.Contains(out.String(), "All 5 probes passed.") {
		t.Errorf("output: got\n%s\nwant all probes passed", &out)
	}

	out.Reset()
	err := run(context.Background(), []string{"probe", "--url", srv.URL, "--repeat", "3", "--secret", "whsec_wrong"}, &out, &out)
	if !errors.Is(err, probe.ErrFailed) {
		t.Errorf("wrong secret: got %v, want probe.ErrFailed\n%s", err, &out)
	}
}

// TestProbeCommand_StandardWebhooks probes a receiver that verifies only
// the Standard Webhooks headers: it passes with --standard-webhooks, and
// fails without.
func TestProbeCommand_StandardWebhooks(t *testing.T) {
	const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	srv := kitServer(t, secret, receiver.SchemeStandard)

	var out bytes.Buffer
	if err := run(context.Background(), []string{"probe", "--url", srv.URL, "--repeat", "3", "--secret", secret, "--standard-webhooks"}, &out, &out); err != nil {
		t.Errorf("got %v, want nil\n%s", err, &out)
	}
	if !strings.Contains(out.String(), "All 5 probes passed.") {
		t.Errorf("output: got\n%s\nwant all probes passed", &out)
	}
	out.Reset()
	err := run(context.Background(), []string{"probe", "--url", srv.URL, "--repeat", "3", "--secret", secret}, &out, &out)
	if !errors.Is(err, probe.ErrFailed) {
		t.Errorf("without --standard-webhooks: got %v, want probe.ErrFailed\n%s", err, &out)
	}
}

// kitServer serves a receiver built with the kit on a fresh SQLite file,
// verifying the scheme with secret, its handler doing nothing.
func kitServer(t *testing.T, secret string, scheme receiver.Scheme) *httptest.Server {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "r.db")+"?_txlock=immediate&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := receiver.CreateTable(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	h, err := receiver.New(receiver.Config{
		DB:      db,
		Secrets: []string{secret},
		Scheme:  scheme,
		Handle:  func(context.Context, *sql.Tx, *receiver.Event) error { return nil },
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
