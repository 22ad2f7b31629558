package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net"
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

// A kitREADME is how TestKitREADMEs follows one kit's README.
type kitREADME struct {
	name   string
	readme string
	// section holds the steps, in order: install, the example, run it,
	// probe it, count the effects.
	section string
	// file is the name the README saves its example as; the example's
	// block names it on its first lines.
	file string
	// database is where the example keeps its tables: "postgres" (the
	// test gives DATABASE_URL) or "sqlite" (the file sqlite names, in the
	// folder the example runs in).
	database, sqlite string
	// require reports what this machine lacks to follow the README.
	require func() error
	// path is put first on the reader's PATH, after the webhooks command.
	path string
	// env is added to the reader's environment.
	env []string
	// leftovers are what the install writes into the kit's folder of the
	// repository, removed after the test unless they were there before.
	leftovers []string
}

var kitREADMEs = []kitREADME{
	{
		name: "node", readme: "kits/node/README.md", section: "Ten minutes", file: "receiver.mjs",
		database: "postgres",
		// Without detecting ES module syntax, as Node did before 20.19: an
		// example with import in a .js file of a project without "type":
		// "module" fails then, as it did for the newcomer.
		env: []string{"NODE_OPTIONS=--no-experimental-detect-module"},
		require: func() error {
			if err := lookPath("node", aptNode); err != nil {
				return err
			}
			if err := lookPath("npm", aptNode); err != nil {
				return err
			}
			return lookPath("psql", "postgresql-client")
		},
	},
	{
		name: "python", readme: "kits/python/README.md", section: "Ten minutes", file: "receiver.py",
		database: "sqlite", sqlite: "receiver.db",
		require: func() error {
			out, err := exec.Command(python, "-c", "import venv, setuptools, wheel, sqlite3").CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s cannot import venv, setuptools and wheel (apt-get install python3-venv python3-setuptools python3-wheel): %v\n%s", python, err, out)
			}
			return nil
		},
		// The README's python3 is Debian's, which has setuptools and wheel
		// (a pyenv python3 first on PATH may not).
		path: "/usr/bin",
		// pip builds the kit in its folder.
		leftovers: []string{"kits/python/build", "kits/python/src/factuarea_webhooks.egg-info"},
	},
	{
		name: "php", readme: "kits/php/README.md", section: "Ten minutes: a verified, deduplicated, probed receiver", file: "receiver.php",
		database: "sqlite", sqlite: "receiver.db",
		require: func() error {
			if err := lookPath("php", aptPHP); err != nil {
				return err
			}
			if out, err := exec.Command("php", "-r", `exit(extension_loaded("pdo_sqlite") ? 0 : 1);`).CombinedOutput(); err != nil {
				return fmt.Errorf("php lacks pdo_sqlite (apt-get install php-sqlite3): %v %s", err, out)
			}
			return nil
		},
	},
}

var (
	// exportLine is a variable the reader sets before starting the example.
	exportLine = regexp.MustCompile(`^export ([A-Z_][A-Z0-9_]*)=(\S*)`)
	// readmePort is the port the READMEs' receivers listen on.
	readmePort = "127.0.0.1:3000"
)

// TestKitREADMEs follows each kit's README as a newcomer does, as printed:
// in a fresh folder beside a clone of this repository, it runs the install
// commands, saves the example under the README's file name, starts it as
// the README says, points a company endpoint of a real `webhooks serve` at
// it and registers an invoice.sent event, runs the README's `webhooks
// probe` command, and then the README's count of the effects. The only
// values it fills in are the reader's: the endpoint's secret for whsec_…,
// a database for DATABASE_URL, and a free port for 3000. It fails unless
// the install works, the example starts and creates its own tables, the
// event is delivered and written once to the example's business table,
// the probe passes, and both the README's count and the test's own read of
// the table give one row for each event, the probe's ten copies of one id
// included.
func TestKitREADMEs(t *testing.T) {
	t.Parallel()
	s := startService(t)
	for _, k := range kitREADMEs {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			if err := k.require(); err != nil {
				t.Fatalf("cannot follow %s: %v", k.readme, err)
			}
			followREADME(t, s, k)
		})
	}
}

func followREADME(t *testing.T, s *service, k kitREADME) {
	for _, p := range k.leftovers {
		p = filepath.Join(root, p)
		if _, err := os.Stat(p); os.IsNotExist(err) {
			t.Cleanup(func() { os.RemoveAll(p) })
		}
	}
	md, err := os.ReadFile(filepath.Join(root, k.readme))
	if err != nil {
		t.Fatal(err)
	}
	section := doctest.Section(md, k.section)
	if section == nil {
		t.Fatalf("%s has no section %q", k.readme, k.section)
	}

	// The reader's folder holds a clone of the repository, webhooks/.
	home := t.TempDir()
	if err := os.Symlink(root, filepath.Join(home, "webhooks")); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/factuarea/webhook"
	ten := s.newTenant(t, int(tenants.Add(1)))
	ep := s.createEndpoint(t, "/v1/companies/"+ten.company, object{"url": url, "enabled_events": []string{"invoice.*"}})
	values := map[string]string{"FACTUAREA_WEBHOOK_SECRET": ep.secrets[0]}
	var db database
	if k.database == "postgres" {
		db = newDatabase(t, "postgres")
		values["DATABASE_URL"] = db.url
	}
	fill := strings.NewReplacer("whsec_…", ep.secrets[0], readmePort, "127.0.0.1:"+strconv.Itoa(port))

	path := bin
	if k.path != "" {
		path += string(os.PathListSeparator) + k.path
	}
	env := append([]string{"PATH=" + path + string(os.PathListSeparator) + os.Getenv("PATH"), "PORT=" + strconv.Itoa(port)}, k.env...)
	sh := doctest.StartShell(t, home, env...)
	var (
		example         *doctest.Background
		saved, started  bool
		counted         bool
		invoice, copies string
		exampleDir      string
	)
	defer func() {
		if t.Failed() && example != nil {
			t.Logf("the example printed:\n%s", example.Output())
		}
	}()
	for i, b := range doctest.Blocks(section) {
		where := fmt.Sprintf("%s, block %d (line %d of the section)", k.readme, i+1, b.Line)
		switch {
		case b.Lang != "sh":
			if !strings.Contains(firstLines(b.Code, 3), k.file) {
				continue
			}
			if saved {
				t.Fatalf("%s: a second block names %s", where, k.file)
			}
			exampleDir = sh.Var(t, "PWD")
			if err := os.WriteFile(filepath.Join(exampleDir, k.file), []byte(b.Code), 0o644); err != nil {
				t.Fatal(err)
			}
			saved = true

		case strings.Contains(b.Code, "webhooks probe"):
			if !started {
				t.Fatalf("%s: the probe comes before the example runs", where)
			}
			r := sh.Run(t, fill.Replace(b.Code), 2*time.Minute)
			failedCommands(t, where, r)
			m := probeCopies.FindStringSubmatch(r.Output)
			if m == nil {
				t.Fatalf("%s: webhooks probe did not name its event:\n%s", where, r.Output)
			}
			copies = m[1]

		case runsFile(b.Code, k.file):
			if !saved {
				t.Fatalf("%s: the README runs %s before it shows it", where, k.file)
			}
			var command []string
			for _, line := range strings.Split(b.Code, "\n") {
				if m := exportLine.FindStringSubmatch(line); m != nil {
					v, ok := values[m[1]]
					if !ok {
						t.Fatalf("%s: the README sets %s, which the test does not know how to fill in", where, m[1])
					}
					sh.Run(t, "export "+m[1]+"="+shellQuote(v), 10*time.Second)
					continue
				}
				if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
					command = append(command, fill.Replace(line))
				}
			}
			var runEnv []string
			for name := range values {
				runEnv = append(runEnv, name+"="+sh.Var(t, name))
			}
			if sh.Var(t, "FACTUAREA_WEBHOOK_SECRET") != ep.secrets[0] {
				t.Fatalf("%s: the README does not export FACTUAREA_WEBHOOK_SECRET before starting the example", where)
			}
			example = doctest.StartBackground(t, sh.Var(t, "PWD"), strings.Join(command, "\n"), append(env, runEnv...)...)
			waitListening(t, where, example, port)
			started = true

			// A real delivery: the service's company envelope, invoice.sent.
			invoice = s.event(t, object{"type": "invoice.sent", "company_id": ten.company,
				"data": object{"object": object{"object": "invoice", "id": "inv_readme", "number": "FAC-2026-00042", "total": "1210.00"}}})
			s.delivered(t, ep, invoice)

		default:
			r := sh.Run(t, fill.Replace(b.Code), 5*time.Minute)
			failedCommands(t, where, r)
			if copies != "" {
				counted = true
				checkCount(t, where, r.Output, copies, invoice)
			}
		}
	}
	switch {
	case !saved:
		t.Fatalf("%s shows no block that names %s", k.readme, k.file)
	case !started:
		t.Fatalf("%s never runs %s", k.readme, k.file)
	case copies == "":
		t.Fatalf("%s never runs webhooks probe", k.readme)
	case !counted:
		t.Fatalf("%s does not say how to count the effects after the probe", k.readme)
	}

	// The test's own read of the business table and the kit's.
	switch k.database {
	case "sqlite":
		path := filepath.Join(exampleDir, k.sqlite)
		db = database{kind: "sqlite", driver: "sqlite", dsn: "file:" + path + "?_pragma=busy_timeout(10000)"}
	}
	rows := readReceived(t, db)
	for id, n := range rows.count {
		if n != 1 {
			t.Errorf("event %s has %d rows in received_events, want one", id, n)
		}
	}
	for _, id := range []string{invoice, copies} {
		if rows.count[id] != 1 {
			t.Errorf("event %s has %d rows in received_events, want one", id, rows.count[id])
		}
		if !rows.processed[id] {
			t.Errorf("event %s is not in processed_webhook_events", id)
		}
	}
	if rows.invoiceNumber[invoice] != "FAC-2026-00042" {
		t.Errorf("the invoice.sent event's row has invoice_number %q, want FAC-2026-00042", rows.invoiceNumber[invoice])
	}
	if len(rows.count) != 3 {
		t.Errorf("received_events holds %d events, want 3 (the invoice, the probe's copies of one event, its latency probe's event): %v", len(rows.count), rows.count)
	}
}

// firstLines returns the first n lines of code.
func firstLines(code string, n int) string {
	lines := strings.SplitN(code, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// runsFile reports whether a shell block starts the example file.
func runsFile(code, file string) bool {
	for _, line := range strings.Split(code, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && !strings.HasPrefix(f[0], "#") && f[len(f)-1] == file {
			return true
		}
	}
	return false
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func failedCommands(t *testing.T, where string, r doctest.Result) {
	t.Helper()
	for _, f := range r.Failed {
		t.Errorf("%s: a command failed (%s); the block printed:\n%s", where, f, r.Output)
	}
	if len(r.Failed) > 0 {
		t.FailNow()
	}
}

// waitListening waits until the example accepts connections on port.
func waitListening(t *testing.T, where string, p *doctest.Background, port int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if p.Exited() {
			t.Fatalf("%s: the example exited before listening on %d:\n%s", where, port, p.Output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the example does not listen on %d after 60 s:\n%s", where, port, p.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var lastNumber = regexp.MustCompile(`(\d+)\D*$`)

// checkCount reads the README's count of the effects: the lines that name
// the probe's event and the invoice must end with a count of 1.
func checkCount(t *testing.T, where, output string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		var line string
		for _, l := range strings.Split(output, "\n") {
			if strings.Contains(l, id) {
				line = l
			}
		}
		m := lastNumber.FindStringSubmatch(line)
		switch {
		case line == "":
			t.Errorf("%s: the count does not show event %s:\n%s", where, id, output)
		case m == nil || m[1] != "1":
			t.Errorf("%s: the count shows event %s as %q, want a count of 1:\n%s", where, id, line, output)
		}
	}
}

// received is what the example's tables hold.
type received struct {
	count         map[string]int    // rows of received_events per event id
	invoiceNumber map[string]string // its invoice_number, per event id
	processed     map[string]bool   // ids in processed_webhook_events
}

func readReceived(t *testing.T, d database) received {
	t.Helper()
	conn, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := received{count: map[string]int{}, invoiceNumber: map[string]string{}, processed: map[string]bool{}}
	rows, err := conn.QueryContext(ctx, `SELECT event_id, invoice_number FROM received_events`)
	if err != nil {
		t.Fatalf("read received_events: %v", err)
	}
	for rows.Next() {
		var id string
		var number sql.NullString
		if err := rows.Scan(&id, &number); err != nil {
			t.Fatal(err)
		}
		r.count[id]++
		r.invoiceNumber[id] = number.String
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	rows, err = conn.QueryContext(ctx, `SELECT event_id FROM processed_webhook_events`)
	if err != nil {
		t.Fatalf("read processed_webhook_events: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		r.processed[strings.TrimSpace(id)] = true
	}
	return r
}
