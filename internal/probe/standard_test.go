package probe_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/factuarea/webhooks/internal/probe"
	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// standardSecret is in the current secret format, which signs both schemes;
// testSecret is in the earlier one.
const standardSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// kitReceiver is a receiver built with the kit on SQLite, verifying one
// scheme.
func kitReceiver(t *testing.T, scheme receiver.Scheme, secrets ...string) http.Handler {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "receiver.db")+"?_txlock=immediate&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := receiver.CreateTable(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	h, err := receiver.New(receiver.Config{
		DB: db, Secrets: secrets, Scheme: scheme,
		Handle: func(context.Context, *sql.Tx, *receiver.Event) error { return nil },
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRun_StandardWebhooks probes kit receivers that verify only one scheme:
// with StandardWebhooks, both pass every probe, so the signature and stale
// probes spoil both schemes; without it, a receiver of the Standard
// Webhooks headers alone refuses every delivery.
func TestRun_StandardWebhooks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		scheme  receiver.Scheme
		secrets []string
		cfg     probe.Config
		fail    []string
	}{
		{"standard receiver", receiver.SchemeStandard, []string{standardSecret}, probe.Config{StandardWebhooks: true}, nil},
		{"factuarea receiver", receiver.SchemeFactuarea, []string{standardSecret}, probe.Config{StandardWebhooks: true}, nil},
		{"any receiver", receiver.SchemeAny, []string{standardSecret}, probe.Config{StandardWebhooks: true}, nil},
		{"rotation", receiver.SchemeStandard, []string{standardSecret},
			probe.Config{StandardWebhooks: true, Secrets: []string{"whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY=", standardSecret}}, nil},
		// Without the headers the body probe is refused too (401 for
		// 400): it passes, as any refusal does.
		{"standard receiver, headers not sent", receiver.SchemeStandard, []string{standardSecret}, probe.Config{}, []string{probe.Duplicate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.URL = serve(t, kitReceiver(t, tc.scheme, tc.secrets...))
			if cfg.Secrets == nil {
				cfg.Secrets = tc.secrets
			}
			rep, out, err := run(t, cfg)
			if got := rep.Failed(); !slices.Equal(got, tc.fail) {
				t.Errorf("failed probes: got %q, want %q (err %v)\n%s", got, tc.fail, err, out)
			}
			if want := "Standard Webhooks headers too"; strings.Contains(out, want) != cfg.StandardWebhooks {
				t.Errorf("output: got\n%s\nwant %q in the first line only with StandardWebhooks", out, want)
			}
		})
	}
}

// TestRun_StandardRequests checks what the probe sends with
// StandardWebhooks: on every request the three headers, webhook-id the event
// id; the signed deliveries verify in both schemes; the signature probe's
// in neither; the stale probe's only with the clock an hour back.
func TestRun_StandardRequests(t *testing.T) {
	type seen struct {
		header http.Header
		body   []byte
		at     time.Time
	}
	var mu sync.Mutex
	var reqs []seen
	kit := kitReceiver(t, receiver.SchemeAny, standardSecret)
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, seen{r.Header.Clone(), body, time.Now()})
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		kit.ServeHTTP(w, r)
	}))
	rep, out, err := run(t, probe.Config{URL: url, Secrets: []string{standardSecret}, Repeat: 3, StandardWebhooks: true})
	if err != nil {
		t.Fatalf("got %v\n%s", err, out)
	}
	if len(reqs) != 3+1+1+1+1 {
		t.Fatalf("requests: got %d, want 7", len(reqs))
	}
	verifies := func(s seen, at time.Time) (factuarea, standard bool) {
		h := s.header
		factuarea = receiver.Verify(h.Get(signature.HeaderName), s.body, at, standardSecret) == nil
		standard = receiver.VerifyStandard(h.Get(signature.StandardIDHeader), h.Get(signature.StandardTimestampHeader),
			h.Get(signature.StandardSignatureHeader), s.body, at, standardSecret) == nil
		return factuarea, standard
	}
	counts := map[string]int{}
	for i, s := range reqs {
		h := s.header
		if id := h.Get(signature.StandardIDHeader); id == "" || id != h.Get(receiver.HeaderEventID) {
			t.Errorf("request %d: webhook-id %q, Factuarea-Event-Id %q, want the event id in both", i, id, h.Get(receiver.HeaderEventID))
		}
		ts, err := strconv.ParseInt(h.Get(signature.StandardTimestampHeader), 10, 64)
		if err != nil {
			t.Errorf("request %d: webhook-timestamp %q: %v", i, h.Get(signature.StandardTimestampHeader), err)
		}
		fh, err := signature.Parse(h.Get(signature.HeaderName))
		if err != nil || fh.Timestamp != ts {
			t.Errorf("request %d: Factuarea-Signature %q, webhook-timestamp %d, want one timestamp", i, h.Get(signature.HeaderName), ts)
		}
		f, std := verifies(s, s.at)
		switch {
		case f && std:
			counts["signed"]++
		case !f && !std:
			if f, std := verifies(s, s.at.Add(-time.Hour)); f && std {
				counts["stale"]++
			} else {
				counts["other secret"]++
			}
		default:
			t.Errorf("request %d: Factuarea-Signature verifies %t, webhook-signature %t, want both or neither", i, f, std)
		}
	}
	if want := map[string]int{"signed": 5, "stale": 1, "other secret": 1}; !maps.Equal(counts, want) {
		t.Errorf("requests: got %v, want %v", counts, want)
	}
	if res, _ := rep.Result(probe.Duplicate); res.Status != probe.Pass {
		t.Errorf("duplicate: got %v, want PASS", res)
	}
}

// libraryReceiver verifies with the official Standard Webhooks Go library,
// as a customer who uses it would, then parses the event with the kit and
// deduplicates on webhook-id in memory. It records what the library said
// of every request.
type libraryReceiver struct {
	wh   *standardwebhooks.Webhook
	seen seenIDs

	mu      sync.Mutex
	results []error
}

func (l *libraryReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	err = l.wh.Verify(body, r.Header)
	l.mu.Lock()
	l.results = append(l.results, err)
	l.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	ev, err := receiver.ParseEvent(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ev.ID != r.Header.Get(standardwebhooks.HeaderWebhookID) {
		http.Error(w, "webhook-id is not the event id", http.StatusBadRequest)
		return
	}
	if l.seen.first(ev.ID) {
		io.WriteString(w, "processed\n")
		return
	}
	io.WriteString(w, "already processed\n")
}

// TestRun_OfficialLibrary: the official Standard Webhooks Go library
// verifies what the probe sends with StandardWebhooks, with the endpoint's
// secret as given to the probe, and refuses the probes that must be
// refused for the reason each stands for. Without StandardWebhooks the
// library finds no headers, so the test can fail.
func TestRun_OfficialLibrary(t *testing.T) {
	for _, secrets := range [][]string{
		{standardSecret},
		{"whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY=", standardSecret}, // a rotation, the library knowing the old
	} {
		t.Run(strconv.Itoa(len(secrets))+" secrets", func(t *testing.T) {
			wh, err := standardwebhooks.NewWebhook(standardSecret)
			if err != nil {
				t.Fatal(err)
			}
			lib := &libraryReceiver{wh: wh}
			rep, out, err := run(t, probe.Config{URL: serve(t, lib), Secrets: secrets, Repeat: 4, StandardWebhooks: true})
			if err != nil || len(rep.Failed()) > 0 {
				t.Fatalf("got %v, failed %q, want none\n%s", err, rep.Failed(), out)
			}
			counts := map[string]int{}
			for _, err := range lib.results {
				switch {
				case err == nil:
					counts["verified"]++
				case errors.Is(err, standardwebhooks.ErrNoMatchingSignature):
					counts["no matching signature"]++
				case errors.Is(err, standardwebhooks.ErrMessageTooOld):
					counts["too old"]++
				default:
					counts[err.Error()]++
				}
			}
			// 4 copies, the body probe's and the latency probe's.
			if want := map[string]int{"verified": 6, "no matching signature": 1, "too old": 1}; !maps.Equal(counts, want) {
				t.Errorf("the library's verdicts: got %v, want %v", counts, want)
			}
		})
	}
	t.Run("without StandardWebhooks", func(t *testing.T) {
		wh, err := standardwebhooks.NewWebhook(standardSecret)
		if err != nil {
			t.Fatal(err)
		}
		lib := &libraryReceiver{wh: wh}
		rep, out, _ := run(t, probe.Config{URL: serve(t, lib), Secrets: []string{standardSecret}, Repeat: 2})
		if got := rep.Failed(); !slices.Equal(got, []string{probe.Duplicate}) {
			t.Errorf("failed probes: got %q, want duplicate\n%s", got, out)
		}
		for _, err := range lib.results {
			if !errors.Is(err, standardwebhooks.ErrRequiredHeaders) {
				t.Errorf("the library: got %v, want ErrRequiredHeaders", err)
			}
		}
	})
}

func TestRun_StandardWebhooksOldSecret(t *testing.T) {
	for _, secrets := range [][]string{{testSecret}, {standardSecret, testSecret}} {
		_, out, err := run(t, probe.Config{URL: "http://127.0.0.1:1/", Secrets: secrets, StandardWebhooks: true})
		if !errors.Is(err, signature.ErrSecretNotStandard) || !strings.Contains(err.Error(), "secret "+strconv.Itoa(len(secrets))+":") || !strings.Contains(err.Error(), "rotate") {
			t.Errorf("%d secrets: got %v, want ErrSecretNotStandard naming secret %d and what to do", len(secrets), err, len(secrets))
		}
		if out != "" {
			t.Errorf("output: got %q, want none", out)
		}
	}
}
