package webhooks_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/factuarea/webhooks/signature"
)

// readmeReceiver is the first line of the README's receiver example.
const readmeReceiver = "// A receiver of Factuarea webhooks on PostgreSQL"

// TestREADME_ReceiverExample builds the receiver example exactly as the
// README prints it, runs it on a PostgreSQL schema of the test's, and
// sends it a signed invoice.sent event: it processes it once (its orders
// row is written), acknowledges the repeat, and refuses a wrong signature.
func TestREADME_ReceiverExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(readme, []byte("```go\n"+readmeReceiver))
	if start < 0 {
		t.Fatalf("README.md has no Go block starting %q", readmeReceiver)
	}
	code := readme[start+len("```go\n"):]
	code = code[:bytes.Index(code, []byte("\n```"))+1]

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), code, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "receiver")
	// Built in this module, so that it uses this receiver kit and the
	// module's pgx, as a customer's go.mod would.
	build := exec.Command("go", "build", "-o", bin, filepath.Join(dir, "main.go"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's receiver example does not build: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "vet", filepath.Join(dir, "main.go")).CombinedOutput(); err != nil {
		t.Errorf("go vet on the README's receiver example: %v\n%s", err, out)
	}

	db := pgtest.SchemaURL(t)
	secret, err := signature.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := exec.CommandContext(ctx, bin)
	run.Env = append(os.Environ(), "DATABASE_URL="+db, "FACTUAREA_WEBHOOK_SECRET="+secret, "PORT="+strconv.Itoa(port))
	var logs bytes.Buffer
	run.Stdout, run.Stderr = &logs, &logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		run.Wait()
		if t.Failed() {
			t.Logf("the example's output:\n%s", logs.String())
		}
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/factuarea/webhook", port)

	eventID := webhooks.NewID()
	body := []byte(`{"id":"` + eventID + `","type":"invoice.sent","api_version":"2026-09-23","created":1795985715,"livemode":true,"test":false,` +
		`"data":{"type":"invoice.sent","object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","number":"FAC-2026-00042"}}}`)
	send := func(secret string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Factuarea-Signature", signature.Sign(time.Now().Unix(), body, secret))
		req.Header.Set("Factuarea-Event-Id", eventID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	status, answer := send(secret)
	for status == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		status, answer = send(secret)
	}
	if status != 200 || !strings.Contains(answer, "processed") || strings.Contains(answer, "already") {
		t.Fatalf("a new event: got %d %q, want 200 processed", status, answer)
	}
	if status, answer = send(secret); status != 200 || !strings.Contains(answer, "already processed") {
		t.Errorf("the same event again: got %d %q, want 200 already processed", status, answer)
	}
	other, _ := signature.NewSecret()
	if status, answer = send(other); status != 401 {
		t.Errorf("signed with another secret: got %d %q, want 401", status, answer)
	}

	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var number string
	var invoiced bool
	if err := conn.QueryRow(`SELECT invoice_number, invoiced FROM orders WHERE invoice_id = '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42'`).Scan(&number, &invoiced); err != nil || number != "FAC-2026-00042" || !invoiced {
		t.Errorf("the orders row: got %q %t %v, want FAC-2026-00042 invoiced", number, invoiced, err)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
