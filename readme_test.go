package webhooks_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factuarea/webhooks/internal/doctest"
)

// maxREADMELines is how long the README may grow: it is the front door,
// and the guides are in docs/.
const maxREADMELines = 300

func TestREADME_Length(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines, want at most %d: move the detail to a page of docs/", n, maxREADMELines)
	}
}

// walk is the walk with curl: the README's five minutes, then the pages
// whose blocks go on from it with its variables, in this order.
var walk = []struct{ file, section string }{
	{"README.md", "Five minutes with curl"},
	{"docs/getting-started.md", "Making a delivery fail, on one machine"},
	{"docs/api.md", "Many events at once: `POST /v1/events/batch`"},
	{"docs/portal.md", "The customer portal"},
}

var (
	// leadingEnv is the NAME=value assignments before a command.
	leadingEnv = regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*`)
	// assigned is a variable a block sets from a command's output.
	assigned = regexp.MustCompile(`(?m)^([A-Z_][A-Z0-9_]*)=\$\(`)
	// expected is a value of the JSON that a comment says a command
	// prints: its error code or its object.
	expected = regexp.MustCompile(`"(code|object)":"([a-z_]+)"`)
	// serving is serve's start-up line.
	serving = regexp.MustCompile(`(?m)^.*msg="webhooks: serving".*$`)
	// sample is one header line of a request as the README shows it.
	sampleHeader = regexp.MustCompile(`(?m)^([A-Za-z-]+): `)
)

// command returns a block's first command, without the assignments before
// it, or "" for a block of comments.
func command(code string) string {
	for _, line := range strings.Split(code, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return leadingEnv.ReplaceAllString(line, "")
	}
	return ""
}

// TestREADME_Walk follows the README's five minutes with curl as a reader
// does, block by block as printed, against a real `webhooks serve` and
// `webhooks listen`, and then the blocks of the pages that go on from it
// (see walk). The only changes are the ports: the service listens on a
// free port instead of 8080 and the receiver on another instead of 9000.
// A block that starts `webhooks serve` or `webhooks listen` runs in a
// terminal of its own (a new listen replaces the one before, as Ctrl-C
// and a new command would); every other block runs in one shell session,
// which keeps the variables. Each block must run without a failing
// command, set every variable it assigns to a value (not empty, not
// null), print what its comments say it prints (error codes, objects),
// and find something in every list it reads with jq; the receiver must get the
// requests the README shows, with their headers.
func TestREADME_Walk(t *testing.T) {
	for _, tool := range []string{"curl", "jq", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walk needs %s: apt-get install %s", tool, tool)
		}
	}
	bin := webhooksBin(t)
	dir := t.TempDir()
	apiPort, listenPort := freePort(t), freePort(t)
	ports := strings.NewReplacer("localhost:8080", "localhost:"+strconv.Itoa(apiPort), "127.0.0.1:9000", "127.0.0.1:"+strconv.Itoa(listenPort))
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	sh := doctest.StartShell(t, dir, env...)
	// jq as the reader has it, which also reports a list it read that was
	// empty: a walk that lists deliveries and finds none is broken.
	sh.Run(t, `jq() {
  local out rc
  out=$(command jq "$@"); rc=$?
  case "$1" in .data\[\]*) [ -n "$out" ] || { printf '@@failed 1: jq %s printed nothing: the list is empty@@\n' "$1" >&2; rc=1; } ;; esac
  [ -z "$out" ] || printf '%s\n' "$out"
  return $rc
}`, 10*time.Second)
	var serve, listen *doctest.Background
	defer func() {
		if t.Failed() {
			if serve != nil {
				t.Logf("webhooks serve printed:\n%s", serve.Output())
			}
			if listen != nil {
				t.Logf("webhooks listen printed:\n%s", listen.Output())
			}
		}
	}()
	blocks := 0
	for _, part := range walk {
		md, err := os.ReadFile(part.file)
		if err != nil {
			t.Fatal(err)
		}
		section := doctest.Section(md, part.section)
		if section == nil {
			t.Fatalf("%s has no section %q", part.file, part.section)
		}
		all := doctest.Blocks(section)
		for i, b := range all {
			if b.Lang != "sh" {
				continue
			}
			blocks++
			where := fmt.Sprintf("%s, %q, block %d", part.file, part.section, i+1)
			code := ports.Replace(b.Code)
			switch cmd := command(code); {
			case strings.HasPrefix(cmd, "webhooks serve"):
				if serve != nil {
					t.Fatalf("%s starts a second webhooks serve", where)
				}
				serve = doctest.StartBackground(t, dir, code, append(env, "WEBHOOKS_ADDR=127.0.0.1:"+strconv.Itoa(apiPort))...)
				serve.WaitFor(t, serving, 60*time.Second)
				checkServing(t, where, dir, b.Code, serve.Output())
			case strings.HasPrefix(cmd, "webhooks listen"):
				if listen != nil {
					listen.Stop()
				}
				code = strings.Replace(code, "webhooks listen", "webhooks listen -addr 127.0.0.1:"+strconv.Itoa(listenPort), 1)
				listen = doctest.StartBackground(t, dir, code, env...)
				listen.WaitFor(t, regexp.MustCompile(`Listening on http://`), 30*time.Second)
			default:
				r := sh.Run(t, code, 60*time.Second)
				checkBlock(t, sh, where, b.Code, r)
				// The samples that follow the block are what the receiver
				// prints: wait for each, then for both deliveries to be
				// recorded, as the reader would see them in the history.
				var samples []string
				for _, s := range all[i+1:] {
					if s.Lang == "sh" {
						break
					}
					if s.Lang == "" && strings.HasPrefix(s.Code, "POST /") {
						samples = append(samples, s.Code)
					}
				}
				if len(samples) > 0 {
					if listen == nil {
						t.Fatalf("%s: the receiver's output is shown, and no webhooks listen runs", where)
					}
					for _, s := range samples {
						waitForSample(t, where, listen, s)
					}
					waitDelivered(t, sh, where, apiPort)
				}
			}
		}
	}
	if blocks < 10 {
		t.Errorf("the walk ran %d blocks, want the README's and its pages': is a section missing?", blocks)
	}
}

// checkServing compares serve's start-up line with the one the block's
// comments show, and checks the first start's admin key.
func checkServing(t *testing.T, where, dir, code, output string) {
	t.Helper()
	line := serving.FindString(output)
	var shown []string
	for _, l := range strings.Split(code, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "#") {
			shown = append(shown, strings.Fields(strings.TrimPrefix(l, "#"))...)
		}
	}
	if len(shown) == 0 {
		t.Errorf("%s: no start-up line is shown", where)
	}
	for _, kv := range shown {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch {
		case !strings.Contains(line, " "+k+"="):
			t.Errorf("%s: the start-up line has no %s: %s", where, k, line)
		case k != "addr" && k != "public_url" && !strings.Contains(v, "…") && !strings.Contains(line, kv):
			t.Errorf("%s: the start-up line does not say %s: %s", where, kv, line)
		}
	}
	if !strings.Contains(output, "Created the admin key") {
		t.Errorf("%s: the first start did not print the admin key it created:\n%s", where, output)
	}
	fi, err := os.Stat(filepath.Join(dir, "data", "admin.key"))
	if err != nil {
		t.Fatalf("%s: the first start kept no data/admin.key: %v", where, err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("%s: data/admin.key has mode %o, want 600", where, mode)
	}
}

// checkBlock checks what a block run in the shell did.
func checkBlock(t *testing.T, sh *doctest.Shell, where, code string, r doctest.Result) {
	t.Helper()
	for _, f := range r.Failed {
		t.Errorf("%s: a command failed (%s); the block printed:\n%s", where, f, r.Output)
	}
	for _, m := range assigned.FindAllStringSubmatch(code, -1) {
		if v := sh.Var(t, m[1]); v == "" || v == "null" {
			t.Errorf("%s: $%s is %q after the block; it printed:\n%s", where, m[1], v, r.Output)
		}
	}
	compact := strings.ReplaceAll(r.Output, `": "`, `":"`)
	for _, line := range strings.Split(code, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range expected.FindAllStringSubmatch(line, -1) {
			if !strings.Contains(compact, m[0]) {
				t.Errorf("%s: the comment says %s is printed, and the block printed:\n%s", where, m[0], r.Output)
			}
		}
	}
}

// waitForSample waits until the receiver has printed a request to the
// sample's path with each header the sample shows.
func waitForSample(t *testing.T, where string, listen *doctest.Background, sample string) {
	t.Helper()
	first, _, _ := strings.Cut(sample, "\n")
	var headers []string
	for _, m := range sampleHeader.FindAllStringSubmatch(sample, -1) {
		headers = append(headers, m[1])
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := listen.Output()
		for _, req := range strings.Split(out, "\n\n") {
			if !strings.Contains(req, " "+first+"\n") {
				continue
			}
			missing := false
			for _, h := range headers {
				if !strings.Contains(req, "\n"+h+": ") {
					missing = true
				}
			}
			if !missing {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the receiver did not get %q with the headers %v that the README shows; it printed:\n%s", where, first, headers, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitDelivered waits until the walk's event is recorded delivered on both
// of its endpoints, as the reader finds it when reading the history next.
func waitDelivered(t *testing.T, sh *doctest.Shell, where string, apiPort int) {
	t.Helper()
	script := `for _ in $(seq 1 300); do
  a=$(curl -s "localhost:$API_PORT/v1/companies/$COMPANY/webhook_endpoints/$COMPANY_EP/deliveries?event_id=$EVENT" -H "Authorization: Bearer $ADMIN" | jq -r '.data[0].status')
  b=$(curl -s "localhost:$API_PORT/v1/accounts/$ACCOUNT/webhook_endpoints/$ACCOUNT_EP/deliveries?event_id=$EVENT" -H "Authorization: Bearer $ADMIN" | jq -r '.data[0].status')
  [ "$a $b" = "delivered delivered" ] && break
  sleep 0.1
done
echo "$a $b"`
	r := sh.Run(t, strings.ReplaceAll(script, "$API_PORT", strconv.Itoa(apiPort)), 60*time.Second)
	if strings.TrimSpace(r.Output) != "delivered delivered" {
		t.Fatalf("%s: the event's deliveries are %q, want delivered on both endpoints", where, r.Output)
	}
}
