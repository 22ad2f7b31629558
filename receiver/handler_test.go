package receiver_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// TestHandler_ConcurrentDeliveries delivers one event 50 times at once, each
// copy signed and with its own delivery id, as when a retry overlaps a slow
// first attempt or two endpoints share a URL: all answer 200 and the handler
// runs once.
func TestHandler_ConcurrentDeliveries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		var runs atomic.Int64
		var f *fixture
		f = setup(t, b, func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
			runs.Add(1)
			// Hold the transaction open a moment so that the other copies
			// arrive while the first is still uncommitted.
			time.Sleep(20 * time.Millisecond)
			return f.recordEffect(ctx, tx, ev)
		})
		const copies = 50
		id := newID(t)
		body := eventBody(id)
		start := make(chan struct{})
		statuses := make([]int, copies)
		var wg sync.WaitGroup
		for i := range copies {
			wg.Go(func() {
				<-start
				statuses[i] = f.deliver(t, body).Code
			})
		}
		close(start)
		wg.Wait()
		for i, got := range statuses {
			if got != http.StatusOK {
				t.Errorf("copy %d: got status %d, want 200", i, got)
			}
		}
		if got := runs.Load(); got != 1 {
			t.Errorf("handler runs: got %d, want 1", got)
		}
		if got := f.count(t, "effects", id); got != 1 {
			t.Errorf("effects: got %d rows, want 1", got)
		}
		if got := f.count(t, "processed_webhook_events", id); got != 1 {
			t.Errorf("processed_webhook_events: got %d rows, want 1", got)
		}
	})
}

// TestHandler_Repeat delivers an event, then a later attempt of it: the
// repeat answers 200 without running the handler.
func TestHandler_Repeat(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		var runs atomic.Int64
		var f *fixture
		f = setup(t, b, func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
			runs.Add(1)
			return f.recordEffect(ctx, tx, ev)
		})
		id := newID(t)
		w := f.deliver(t, eventBody(id))
		if w.Code != http.StatusOK || bodyOf(w) != "processed" {
			t.Fatalf("first delivery: got %d %q, want 200 %q", w.Code, bodyOf(w), "processed")
		}
		f.clock.Add(time.Hour)
		w = f.deliver(t, eventBody(id))
		if w.Code != http.StatusOK || bodyOf(w) != "already processed" {
			t.Errorf("repeat: got %d %q, want 200 %q", w.Code, bodyOf(w), "already processed")
		}
		if got := runs.Load(); got != 1 {
			t.Errorf("handler runs: got %d, want 1", got)
		}
		// Another event about the same invoice has its own id: not a repeat.
		if w := f.deliver(t, eventBody(newID(t))); w.Code != http.StatusOK || runs.Load() != 2 {
			t.Errorf("another event: got %d and %d runs, want 200 and 2 runs", w.Code, runs.Load())
		}
	})
}

// TestHandler_RetryAfterFailure: a handler that fails once and then succeeds
// produces one effect after the sender's retry. The first attempt answers
// 500 and leaves nothing behind, not even the id, so the retry runs the
// handler again.
func TestHandler_RetryAfterFailure(t *testing.T) {
	for _, mode := range []string{"error", "panic"} {
		t.Run(mode, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, b backend) {
				var runs atomic.Int64
				var f *fixture
				f = setup(t, b, func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
					// The effect is written before the failure, so the test
					// shows that the rollback removes it.
					if err := f.recordEffect(ctx, tx, ev); err != nil {
						return err
					}
					if runs.Add(1) == 1 {
						if mode == "panic" {
							panic("the ledger is locked")
						}
						return errors.New("the ledger is locked")
					}
					return nil
				})
				id := newID(t)
				body := eventBody(id)
				w := f.deliver(t, body)
				if w.Code != http.StatusInternalServerError {
					t.Fatalf("first attempt: got %d, want 500", w.Code)
				}
				if got := bodyOf(w); strings.Contains(got, "ledger") {
					t.Errorf("first attempt: got body %q, which reveals the handler's error", got)
				}
				if got := f.count(t, "effects", id); got != 0 {
					t.Errorf("after the failed attempt: got %d effects, want 0", got)
				}
				if got := f.count(t, "processed_webhook_events", id); got != 0 {
					t.Errorf("after the failed attempt: got %d processed ids, want 0", got)
				}

				f.clock.Add(time.Minute) // the first wait of the schedule
				if w := f.deliver(t, body); w.Code != http.StatusOK {
					t.Fatalf("retry: got %d, want 200", w.Code)
				}
				f.clock.Add(time.Minute)
				if w := f.deliver(t, body); w.Code != http.StatusOK {
					t.Fatalf("repeat after success: got %d, want 200", w.Code)
				}
				if got := runs.Load(); got != 2 {
					t.Errorf("handler runs: got %d, want 2 (the failure and the retry)", got)
				}
				if got := f.count(t, "effects", id); got != 1 {
					t.Errorf("effects: got %d rows, want 1", got)
				}
			})
		})
	}
}

// TestHandler_CommitFails makes the commit itself fail: the answer is 500
// and the id is not recorded. PostgreSQL and SQLite fail it with a foreign
// key checked only at commit. MySQL checks every constraint at once, so
// there the handler has its connection killed, which the commit finds.
func TestHandler_CommitFails(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		var runs atomic.Int64
		var f *fixture
		f = setup(t, b, func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
			runs.Add(1)
			if b.dialect == receiver.MySQL {
				var conn int64
				if err := tx.QueryRowContext(ctx, `SELECT CONNECTION_ID()`).Scan(&conn); err != nil {
					return err
				}
				_, err := f.db.ExecContext(ctx, fmt.Sprintf(`KILL CONNECTION %d`, conn))
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO children (parent_id) VALUES (42)`)
			return err
		})
		if b.dialect != receiver.MySQL {
			for _, q := range []string{
				`CREATE TABLE parents (id INTEGER PRIMARY KEY)`,
				`CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`,
			} {
				if _, err := f.db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		}
		id := newID(t)
		if w := f.deliver(t, eventBody(id)); w.Code != http.StatusInternalServerError {
			t.Errorf("got %d, want 500", w.Code)
		}
		if got := runs.Load(); got != 1 {
			t.Errorf("handler runs: got %d, want 1", got)
		}
		if got := f.count(t, "processed_webhook_events", id); got != 0 {
			t.Errorf("processed_webhook_events: got %d rows, want 0", got)
		}
	})
}

// TestHandler_Refusals checks every refusal: the status, that the handler did
// not run and that no id was recorded.
func TestHandler_Refusals(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		var runs atomic.Int64
		f := setup(t, b, func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
			runs.Add(1)
			return nil
		})
		now := f.clock.Now()
		id := newID(t)
		good := eventBody(id)
		sign := func(body []byte, at time.Time, secrets ...string) string {
			return signature.Sign(at.Unix(), body, secrets...)
		}
		signed := func(body string) (string, string) { return body, sign([]byte(body), now, testSecret) }
		for _, tc := range []struct {
			name   string
			method string
			body   string
			sig    string
			want   int
			// inBody is a piece of the answer that says which check failed.
			inBody string
		}{
			{"no signature", "POST", string(good), "", 401, "header is missing"},
			{"wrong secret", "POST", string(good), sign(good, now, "whsec_other"), 401, "no v1 signature matches"},
			{"body changed after signing", "POST", string(good) + " ", sign(good, now, testSecret), 401, "no v1 signature matches"},
			{"an hour old", "POST", string(good), sign(good, now.Add(-time.Hour), testSecret), 401, "outside the tolerance"},
			{"from the future", "POST", string(good), sign(good, now.Add(10*time.Minute), testSecret), 401, "outside the tolerance"},
			{"garbage header", "POST", string(good), "t=abc,v1=zz", 401, "no valid timestamp"},
			{"not JSON", "POST", "", "", 400, "invalid event"},
			{"array", "POST", "", "", 400, "invalid event"},
			{"no id", "POST", "", "", 400, "no id"},
			{"id not a UUID", "POST", "", "", 400, "not a canonical lowercase UUID"},
			{"uppercase id", "POST", "", "", 400, "not a canonical lowercase UUID"},
			{"no type", "POST", "", "", 400, "no type"},
			{"GET", "GET", "", "", 405, "not allowed"},
			{"PUT", "PUT", string(good), sign(good, now, testSecret), 405, "not allowed"},
			{"too large", "POST", "", "", 413, "too large"},
		} {
			switch tc.name {
			case "not JSON":
				tc.body, tc.sig = signed(`{"id":"` + id + `","type":`)
			case "array":
				tc.body, tc.sig = signed(`[]`)
			case "no id":
				tc.body, tc.sig = signed(`{"type":"invoice.sent"}`)
			case "id not a UUID":
				tc.body, tc.sig = signed(`{"id":"evt_123","type":"invoice.sent"}`)
			case "uppercase id":
				tc.body, tc.sig = signed(`{"id":"` + strings.ToUpper(id) + `","type":"invoice.sent"}`)
			case "no type":
				tc.body, tc.sig = signed(`{"id":"` + id + `"}`)
			case "too large":
				big := `{"id":"` + id + `","type":"invoice.sent","pad":"` + strings.Repeat("x", receiver.DefaultMaxBodyBytes) + `"}`
				tc.body, tc.sig = signed(big)
			}
			t.Run(tc.name, func(t *testing.T) {
				r := httptest.NewRequest(tc.method, "/webhook", bytes.NewReader([]byte(tc.body)))
				if tc.sig != "" {
					r.Header.Set(signature.HeaderName, tc.sig)
				}
				w := httptest.NewRecorder()
				f.h.ServeHTTP(w, r)
				if w.Code != tc.want {
					t.Errorf("got status %d, want %d (body %q)", w.Code, tc.want, bodyOf(w))
				}
				if got := bodyOf(w); !strings.Contains(got, tc.inBody) {
					t.Errorf("got body %q, want it to contain %q", got, tc.inBody)
				}
				if tc.want == 405 && w.Header().Get("Allow") != "POST" {
					t.Errorf("got Allow %q, want POST", w.Header().Get("Allow"))
				}
			})
		}
		if got := runs.Load(); got != 0 {
			t.Errorf("handler runs: got %d, want 0", got)
		}
		var n int
		if err := f.db.QueryRow(`SELECT COUNT(*) FROM processed_webhook_events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("processed_webhook_events: got %d rows, want 0", n)
		}
	})
}

// TestHandler_HandlerSeesEvent checks what the handler receives: the parsed
// account envelope, the headers, and a transaction in which the id is
// already recorded. The endpoint is mid-rotation: the Handler knows the new
// and the old secret, and the sender still signs with the old one.
func TestHandler_HandlerSeesEvent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		var got *receiver.Event
		var inTx int
		db := b.open(t)
		if err := receiver.CreateTable(context.Background(), db); err != nil {
			t.Fatal(err)
		}
		h, err := receiver.New(receiver.Config{
			DB:      db,
			Secrets: []string{"whsec_new", testSecret},
			Handle: func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
				got = ev
				q := `SELECT COUNT(*) FROM processed_webhook_events WHERE event_id = ` + b.ph(1)
				return tx.QueryRowContext(ctx, q, ev.ID).Scan(&inTx)
			},
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(accountEnvelope)
		r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
		r.Header.Set(signature.HeaderName, signature.Sign(time.Now().Unix(), body, testSecret))
		r.Header.Set(receiver.HeaderEventID, "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31")
		r.Header.Set(receiver.HeaderEventType, "invoice.sent")
		r.Header.Set(receiver.HeaderDeliveryID, "01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23")
		r.Header.Set(receiver.HeaderIdempotencyKey, "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31")
		r.Header.Set(receiver.HeaderAccountRelationship, "own")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("got %d %q, want 200", w.Code, bodyOf(w))
		}
		if got == nil {
			t.Fatal("the handler did not run")
		}
		if inTx != 1 {
			t.Errorf("id rows seen in the handler's transaction: got %d, want 1", inTx)
		}
		wantHeaders := receiver.Headers{
			EventID:             "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31",
			EventType:           "invoice.sent",
			DeliveryID:          "01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23",
			AccountRelationship: "own",
			IdempotencyKey:      "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31",
		}
		if got.Headers != wantHeaders {
			t.Errorf("Headers: got %+v, want %+v", got.Headers, wantHeaders)
		}
		if got.ID != "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31" || got.Account == nil || got.Account.ID != "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00" {
			t.Errorf("event: got id %q account %+v, want the account envelope's", got.ID, got.Account)
		}
		if !bytes.Equal(got.Raw, body) {
			t.Errorf("Raw: got %q, want the body as received", got.Raw)
		}
	})
}
