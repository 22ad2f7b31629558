package webhooks_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/doctest"
	"github.com/factuarea/webhooks/internal/pgtest"
	"github.com/factuarea/webhooks/signature"
)

// The documentation's tests: every relative link resolves, every example
// that can be built, run or parsed is, and the tables of flags are whole.
// The README's walk with curl is in readme_test.go.

// notYetWritten are pages that the documentation links to before they
// exist, each with who writes it. A page here that exists fails the test,
// so that the entry goes once the page is written.
var notYetWritten = map[string]string{}

// markdownFiles returns the repository's Markdown files, as paths from
// its root: the README, docs/, the kits' READMEs, CHANGELOG.md and any
// other, outside dependencies and dot folders.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "vendor" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "CHANGELOG.md", "docs/README.md", "kits/README.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing", want)
		}
	}
	return files
}

// TestDocs_Links fails on a relative link, in any Markdown file of the
// repository, whose file does not exist or whose #anchor names no heading
// of its page.
func TestDocs_Links(t *testing.T) {
	for p, who := range notYetWritten {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists now: remove it from notYetWritten (%s)", p, who)
		}
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(p string) map[string]bool {
		if a, ok := anchors[p]; ok {
			return a
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		anchors[p] = doctest.Anchors(b)
		return anchors[p]
	}
	files := markdownFiles(t)
	checked := 0
	for _, file := range files {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doctest.Links(md) {
			u, err := url.Parse(l.Target)
			if err != nil {
				t.Errorf("%s:%d: link %q does not parse: %v", file, l.Line, l.Target, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // another site: not checked here
			}
			checked++
			target := file
			if u.Path != "" {
				if strings.HasPrefix(u.Path, "/") {
					t.Errorf("%s:%d: link %q is absolute: write it relative to the file", file, l.Line, l.Target)
					continue
				}
				target = path.Clean(path.Join(path.Dir(file), u.Path))
				if strings.HasPrefix(target, "../") {
					t.Errorf("%s:%d: link %q leaves the repository", file, l.Line, l.Target)
					continue
				}
				if _, ok := notYetWritten[target]; ok {
					continue
				}
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", file, l.Line, l.Target, target)
					continue
				}
			}
			if u.Fragment == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q names an anchor in a file that is not Markdown", file, l.Line, l.Target)
				continue
			}
			if !anchorsOf(target)[u.Fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s", file, l.Line, l.Target, target, u.Fragment)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d relative links in %d files, want many more: is the link reader broken?", checked, len(files))
	}
}

// docBlocks returns the code blocks of every Markdown file, by file.
func docBlocks(t *testing.T) map[string][]doctest.Block {
	t.Helper()
	out := map[string][]doctest.Block{}
	for _, file := range markdownFiles(t) {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out[file] = doctest.Blocks(md)
	}
	return out
}

// TestDocs_JSON parses every json block of the documentation.
func TestDocs_JSON(t *testing.T) {
	n := 0
	for file, blocks := range docBlocks(t) {
		for _, b := range blocks {
			if b.Lang != "json" {
				continue
			}
			n++
			var v any
			if err := json.Unmarshal([]byte(b.Code), &v); err != nil {
				t.Errorf("%s:%d: the json block does not parse: %v\n%s", file, b.Line, err, b.Code)
			}
		}
	}
	if n == 0 {
		t.Error("no json block found")
	}
}

// goProgram matches a Go block that is a whole program: its first line
// that is not a comment is a package clause.
var goProgram = regexp.MustCompile(`^(?:\s*//[^\n]*\n)*\s*package \w+\n`)

// TestDocs_GoPrograms builds and vets every Go block of the documentation
// that is a whole program, in this module, as a customer's go.mod would
// build it with this module's packages. The other Go blocks are fragments
// of them.
func TestDocs_GoPrograms(t *testing.T) {
	n := 0
	for file, blocks := range docBlocks(t) {
		for _, b := range blocks {
			if b.Lang != "go" || !goProgram.MatchString(b.Code) {
				continue
			}
			n++
			t.Run(fmt.Sprintf("%s:%d", file, b.Line), func(t *testing.T) {
				buildGo(t, b.Code)
			})
		}
	}
	if n == 0 {
		t.Error("no Go program found in the documentation")
	}
}

// buildGo builds code, a main package, and vets it; it returns the binary.
func buildGo(t *testing.T, code string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "program")
	if out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("the example does not build: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "vet", src).CombinedOutput(); err != nil {
		t.Errorf("go vet on the example: %v\n%s", err, out)
	}
	return bin
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// webhooksBin builds cmd/webhooks once for the package's tests and returns
// the folder that holds it, for a PATH.
func webhooksBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "webhooks-docs-bin-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "webhooks"), "./cmd/webhooks").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/webhooks: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// helpFlag is one flag in a command's -h: its name, the default it
// prints, and the WEBHOOKS_* variable its text names.
type helpFlag struct {
	name, def, env string
}

var (
	helpLine    = regexp.MustCompile(`^  -(\S+)`)
	helpDefault = regexp.MustCompile(`\(default "?([^"]*?)"?\)$`)
	helpEnv     = regexp.MustCompile(`\((WEBHOOKS_[A-Z_]+)\)`)
)

// commandFlags runs `webhooks <command> -h` and reads its flags.
func commandFlags(t *testing.T, command string) []helpFlag {
	t.Helper()
	out, _ := exec.Command(filepath.Join(webhooksBin(t), "webhooks"), command, "-h").CombinedOutput()
	var flags []helpFlag
	for _, line := range strings.Split(string(out), "\n") {
		if m := helpLine.FindStringSubmatch(line); m != nil {
			flags = append(flags, helpFlag{name: m[1]})
			continue
		}
		if len(flags) == 0 || !strings.HasPrefix(line, "    \t") {
			continue
		}
		f := &flags[len(flags)-1]
		if m := helpDefault.FindStringSubmatch(line); m != nil {
			f.def = m[1]
		}
		if m := helpEnv.FindStringSubmatch(line); m != nil {
			f.env = m[1]
		}
	}
	if len(flags) == 0 {
		t.Fatalf("webhooks %s -h lists no flags:\n%s", command, out)
	}
	return flags
}

// tableRows returns the rows of every Markdown table in md, as cells.
func tableRows(md []byte) [][]string {
	var rows [][]string
	for _, line := range strings.Split(string(md), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

var backticked = regexp.MustCompile("`([^`]*)`")

// sameDefault reports whether the documented default doc (a cell's first
// code span) is the default the program prints: equal, or the same
// duration (2160h is 2160h0m0s).
func sameDefault(doc, printed string) bool {
	if doc == printed {
		return true
	}
	a, errA := time.ParseDuration(doc)
	b, errB := time.ParseDuration(printed)
	return errA == nil && errB == nil && a == b
}

// TestDocs_CommandFlags checks that each command's page has a table row
// for every flag the command takes, with the default it prints, and, for
// serve, the WEBHOOKS_* variable that sets it.
func TestDocs_CommandFlags(t *testing.T) {
	for _, c := range []struct{ command, page string }{
		{"serve", "docs/operations.md"},
		// listen's two modes: the receiver's flags, and the relay's.
		{"listen", "docs/getting-started.md docs/relay.md"},
		{"probe", "docs/receiving.md"},
		{"bench", "docs/performance.md"},
	} {
		t.Run(c.command, func(t *testing.T) {
			var rows [][]string
			for _, page := range strings.Fields(c.page) {
				md, err := os.ReadFile(page)
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, tableRows(md)...)
			}
			for _, f := range commandFlags(t, c.command) {
				var row []string
				for _, r := range rows {
					if slices.ContainsFunc(r[:min(2, len(r))], func(cell string) bool {
						return cell == "`-"+f.name+"`" || cell == "`--"+f.name+"`"
					}) {
						row = r
						break
					}
				}
				if row == nil {
					t.Errorf("%s has no table row for webhooks %s's flag -%s", c.page, c.command, f.name)
					continue
				}
				if c.command == "serve" && f.env != "" && row[0] != "`"+f.env+"`" {
					t.Errorf("%s: the row of -%s starts with %s, want `%s`", c.page, f.name, row[0], f.env)
				}
				if f.def == "" {
					continue
				}
				found := false
				for _, cell := range row {
					for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
						if sameDefault(m[1], f.def) {
							found = true
						}
					}
				}
				if !found {
					t.Errorf("%s: the row of -%s does not give its default %q: %q", c.page, f.name, f.def, row)
				}
			}
		})
	}
}

// goReceiver is the first line of the Go receiver example in
// docs/receiving.md.
const goReceiver = "// A receiver of Factuarea webhooks on PostgreSQL"

// TestDocs_GoReceiverExample builds the Go receiver example exactly as
// docs/receiving.md prints it, runs it on a PostgreSQL schema of the
// test's, and sends it a signed invoice.sent event: it processes it once
// (its orders row is written), acknowledges the repeat, and refuses a
// wrong signature.
func TestDocs_GoReceiverExample(t *testing.T) {
	md, err := os.ReadFile("docs/receiving.md")
	if err != nil {
		t.Fatal(err)
	}
	var code string
	for _, b := range doctest.Blocks(md) {
		if b.Lang == "go" && strings.HasPrefix(b.Code, goReceiver) {
			code = b.Code
		}
	}
	if code == "" {
		t.Fatalf("docs/receiving.md has no Go block starting %q", goReceiver)
	}
	bin := buildGo(t, code)

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
	receiverURL := fmt.Sprintf("http://127.0.0.1:%d/factuarea/webhook", port)

	eventID := webhooks.NewID()
	body := []byte(`{"id":"` + eventID + `","type":"invoice.sent","api_version":"2026-09-23","created":1795985715,"livemode":true,"test":false,` +
		`"data":{"type":"invoice.sent","object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42","number":"FAC-2026-00042"}}}`)
	send := func(secret string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", receiverURL, bytes.NewReader(body))
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
