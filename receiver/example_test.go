package receiver_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"

	"github.com/factuarea/webhooks/receiver"
	"github.com/factuarea/webhooks/signature"
)

// The recipe: a table of processed ids, and a handler that records the id
// and does its work in one transaction. The same event delivered twice has
// its effect once.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "receiver-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// SQLite has one writer at a time: an immediate transaction lock and a
	// busy timeout make concurrent deliveries wait for it instead of failing.
	// With PostgreSQL: sql.Open("pgx", "postgres://…").
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+"?_txlock=immediate&_pragma=busy_timeout(5000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// Once, at startup: processed_webhook_events and its index.
	if err := receiver.CreateTable(ctx, db); err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS sent_invoices (invoice_id TEXT, total TEXT)`); err != nil {
		log.Fatal(err)
	}

	secret := "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8" // os.Getenv("FACTUAREA_WEBHOOK_SECRET")
	webhook, err := receiver.New(receiver.Config{
		DB:      db,
		Secrets: []string{secret},
		// Runs once per event id, in the transaction that records the id:
		// write through tx, and the work and the id commit together.
		Handle: func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
			if ev.Type != "invoice.sent" {
				return nil
			}
			var invoice struct {
				ID    string `json:"id"`
				Total string `json:"total"`
			}
			if err := ev.DecodeObject(&invoice); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO sent_invoices (invoice_id, total) VALUES (?, ?)`, invoice.ID, invoice.Total)
			return err
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/factuarea/webhook", webhook)
	server := httptest.NewServer(mux)
	defer server.Close()

	// The sender delivers the same event twice: a retry after a lost answer.
	body := []byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent","api_version":"2026-09-23",` +
		`"created":1790590561,"livemode":true,"test":false,"correlation_id":"01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",` +
		`"data":{"type":"invoice.sent","object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","total":"1210.00"}}}`)
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, server.URL+"/factuarea/webhook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(signature.HeaderName, signature.Sign(time.Now().Unix(), body, secret))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, answer)
	}

	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sent_invoices`).Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println("sent invoices recorded:", n)
	// Output:
	// 200 processed
	// 200 already processed
	// sent invoices recorded: 1
}

// Purge on a schedule, with the retention that matches how you resend.
func ExamplePurge() {
	var db *sql.DB // the database of the Handler
	ctx := context.Background()

	// 7 days cover every automatic retry; keep 90 days if your team resends
	// deliveries by hand (receiver.ManualResendRetention).
	for range time.Tick(time.Hour) {
		n, err := receiver.Purge(ctx, db, receiver.DefaultRetention)
		if err != nil {
			log.Print(err)
			continue
		}
		log.Printf("purged %d processed webhook ids", n)
	}
}

// Verify tells which check failed, for callers that read requests their own
// way.
func ExampleVerify() {
	secret := "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
	body := []byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping"}`)
	header := signature.Sign(1790590562, body, secret)

	fmt.Println(receiver.Verify(header, body, time.Unix(1790590562, 0), secret))
	fmt.Println(receiver.Verify(header, body, time.Unix(1790590562+3600, 0), secret))
	fmt.Println(receiver.Verify(header, body, time.Unix(1790590562, 0), "whsec_another"))
	// Output:
	// <nil>
	// receiver: invalid signature: signature: timestamp is outside the tolerance
	// receiver: invalid signature: signature: no v1 signature matches the secret
}

// VerifyStandard checks the Standard Webhooks headers, which an endpoint
// with standard_webhooks on also receives, with the same secret.
func ExampleVerifyStandard() {
	secret := "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	id := "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"
	body := []byte(`{"id":"` + id + `","type":"ping"}`)
	sig, err := signature.SignStandard(id, 1790590562, body, secret)
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(receiver.VerifyStandard(id, "1790590562", sig, body, time.Unix(1790590562, 0), secret))
	fmt.Println(receiver.VerifyStandard(id, "1790590562", sig, body, time.Unix(1790590562+3600, 0), secret))
	fmt.Println(receiver.VerifyStandard("", "1790590562", sig, body, time.Unix(1790590562, 0), secret))
	// Output:
	// <nil>
	// receiver: invalid signature: signature: timestamp is outside the tolerance
	// receiver: invalid signature: signature: header is missing: webhook-id
}

// Both envelopes parse into one Event: an account endpoint's adds the
// account, the relationship and the company.
func ExampleParseEvent() {
	ev, err := receiver.ParseEvent([]byte(`{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent",` +
		`"api_version":"2026-09-23","created":1790590561,"livemode":true,"test":false,` +
		`"correlation_id":"01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",` +
		`"account":{"id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00"},"account_relationship":"own",` +
		`"company_id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a01",` +
		`"data":{"type":"invoice.sent","object":{"object":"invoice","total":"1210.00"}}}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.ID, ev.Type, ev.Created.Format(time.RFC3339))
	fmt.Println(ev.Account.ID, ev.AccountRelationship, ev.CompanyID)
	fmt.Println(string(ev.Data.Object))
	// Output:
	// 01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31 invoice.sent 2026-09-28T10:16:01Z
	// 01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00 own 01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a01
	// {"object":"invoice","total":"1210.00"}
}
