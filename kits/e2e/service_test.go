package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const adminKey = "kits-e2e-admin-key"

// service is a `webhooks serve` process on a SQLite database of its own.
type service struct {
	url  string
	logs *logBuffer
}

var servingAddr = regexp.MustCompile(`msg="webhooks: serving" addr=(\S+)`)

// startService starts `webhooks serve` on a fresh SQLite file, on an
// ephemeral port, allowed to deliver to 127.0.0.1 over plain http.
func startService(t *testing.T) *service {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "webhooks"), "serve")
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"WEBHOOKS_ADDR=127.0.0.1:0",
		"WEBHOOKS_DATA="+dir,
		"WEBHOOKS_DATABASE="+filepath.Join(dir, "webhooks.db"),
		"WEBHOOKS_ADMIN_KEY="+adminKey,
		"WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8",
		"WEBHOOKS_ALLOW_HTTP=true",
		"WEBHOOKS_POLL_INTERVAL=200ms",
		"WEBHOOKS_LOG_LEVEL=info",
	)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start webhooks serve: %v", err)
	}
	s := &service{logs: &logBuffer{}}
	addr := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.logs.Write([]byte(sc.Text() + "\n"))
			if m := servingAddr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		<-scanned
		if t.Failed() {
			t.Logf("webhooks serve logs:\n%s", s.logs)
		}
	})
	select {
	case a := <-addr:
		s.url = "http://" + a
	case <-scanned:
		t.Fatalf("webhooks serve exited before serving:\n%s", s.logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("webhooks serve did not start in 30 s:\n%s", s.logs)
	}
	return s
}

// object is a JSON object of the API.
type object = map[string]any

// call makes an admin call and decodes the answer into out (when not nil);
// an answer other than want fails the test.
func (s *service) call(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: got %d %s, want %d", method, path, resp.StatusCode, bytes.TrimSpace(raw), want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

// logBuffer collects a process's output for the failure message; it is
// written by a reading goroutine while the test reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimRight(b.buf.String(), "\n")
}

// dni returns a valid Spanish DNI for n, so that each fixture gets a NIF of
// its own (a NIF is unique on the platform).
func dni(n int) string {
	return fmt.Sprintf("%08d%c", n, "TRWAGMYFPDXBNJZSQVHLCKE"[n%23])
}
