package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A kit is one receiver kit's example receiver, started as kits/README.md
// says. Adding a kit is adding an entry to kits.
type kit struct {
	name string
	// dir is the kit's directory in the repository.
	dir string
	// example is the file the kit's command runs, which must exist once dir
	// does.
	example string
	// databases are the DATABASE_URL kinds the kit supports: sqlite,
	// postgres, mysql.
	databases []string
	// require reports what this machine lacks to run the example: a tool,
	// an extension or the kit's installed dependencies.
	require func() error
	// command is the command line that starts the example on port.
	command func(port int) []string
	// env is added to the example's environment.
	env []string
	// ready, when set, matches an output line that also says the example
	// accepts requests, for a server (php -S) whose script cannot print the
	// contract's line before the first request.
	ready func(port int) *regexp.Regexp
}

// The Debian packages the kits need, named in the failure messages.
const (
	aptNode   = "nodejs npm"
	aptPython = "python3 python3-psycopg"
	aptPHP    = "php-cli php-pgsql php-mysql php-sqlite3 php-mbstring"
)

// python is Debian's interpreter: psycopg comes from Debian's package
// (python3-psycopg), which another python3 first on PATH would not see.
const python = "/usr/bin/python3"

var kits = []kit{
	{
		name:      "go",
		dir:       "receiver",
		example:   "kits/e2e/goreceiver/main.go",
		databases: []string{"sqlite", "postgres", "mysql"},
		require:   func() error { return nil }, // built by TestMain
		command:   func(int) []string { return []string{filepath.Join(bin, "goreceiver")} },
	},
	{
		name:      "node",
		dir:       "kits/node",
		example:   "kits/node/example/server.js",
		databases: []string{"sqlite", "postgres"},
		require: func() error {
			if err := lookPath("node", aptNode); err != nil {
				return err
			}
			return nodeModules("kits/node/example", "kits/node", "pg", "better-sqlite3")
		},
		command: func(int) []string { return []string{"node", "kits/node/example/server.js"} },
	},
	{
		name:      "python",
		dir:       "kits/python",
		example:   "kits/python/example/server.py",
		databases: []string{"sqlite", "postgres"},
		require: func() error {
			if _, err := os.Stat(python); err != nil {
				return fmt.Errorf("%s is missing: apt-get install %s", python, aptPython)
			}
			if out, err := exec.Command(python, "-c", "import sqlite3, psycopg").CombinedOutput(); err != nil {
				return fmt.Errorf("%s cannot import sqlite3 and psycopg (apt-get install %s): %v\n%s", python, aptPython, err, out)
			}
			return nil
		},
		command: func(int) []string { return []string{python, "kits/python/example/server.py"} },
		env:     []string{"PYTHONPATH=kits/python/src", "PYTHONUNBUFFERED=1"},
	},
	{
		name:      "php",
		dir:       "kits/php",
		example:   "kits/php/example/index.php",
		databases: []string{"sqlite", "postgres", "mysql"},
		require: func() error {
			if err := lookPath("php", aptPHP); err != nil {
				return err
			}
			out, err := exec.Command("php", "-r", `foreach (["pdo_sqlite", "pdo_pgsql", "pdo_mysql", "mbstring"] as $e) if (!extension_loaded($e)) echo $e, " ";`).CombinedOutput()
			if err != nil || len(out) > 0 {
				return fmt.Errorf("php lacks the extensions %s(apt-get install %s) %v", out, aptPHP, err)
			}
			return nil
		},
		command: func(port int) []string {
			return []string{"php", "-S", "127.0.0.1:" + strconv.Itoa(port), "kits/php/example/index.php"}
		},
		// Several workers, so that the probe's concurrent copies of one
		// event are concurrent on the receiver too.
		env: []string{"PHP_CLI_SERVER_WORKERS=4"},
		ready: func(port int) *regexp.Regexp {
			return regexp.MustCompile(`Development Server \(http://127\.0\.0\.1:` + strconv.Itoa(port) + `\) started`)
		},
	},
}

// present reports whether the kit is in this tree. A kit directory without
// its example fails: the entry is there to run it.
//
// A kit whose directory is missing fails too: TestReceivers stops with a
// Fatalf when present reports false, as every kit is in the tree.
func (k kit) present(t *testing.T) bool {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, k.dir)); errors.Is(err, os.ErrNotExist) {
		return false
	}
	if _, err := os.Stat(filepath.Join(root, k.example)); err != nil {
		t.Fatalf("the %s kit (%s) has no example receiver at %s, which kits/README.md asks of every kit: %v", k.name, k.dir, k.example, err)
	}
	return true
}

var requireOnce sync.Map // kit name → func() error, so that each kit is checked once

// mustRun fails the test when the machine cannot run the kit's example.
func (k kit) mustRun(t *testing.T) {
	t.Helper()
	check, _ := requireOnce.LoadOrStore(k.name, sync.OnceValue(k.require))
	if err := check.(func() error)(); err != nil {
		t.Fatalf("cannot run the %s kit's example receiver: %v", k.name, err)
	}
}

func lookPath(cmd, apt string) error {
	if _, err := exec.LookPath(cmd); err != nil {
		return fmt.Errorf("%s is not on PATH: apt-get install %s", cmd, apt)
	}
	return nil
}

// nodeModules checks that modules resolve from dir as the example's
// require() would, which they do after kits/setup (npm ci in pkg).
func nodeModules(dir, pkg string, modules ...string) error {
	var script strings.Builder
	for _, m := range modules {
		fmt.Fprintf(&script, "require.resolve(%q);", m)
	}
	cmd := exec.Command("node", "-e", script.String())
	cmd.Dir = filepath.Join(root, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s cannot load %s: run kits/setup (npm ci in %s): %v\n%s", dir, strings.Join(modules, ", "), pkg, err, out)
	}
	return nil
}
