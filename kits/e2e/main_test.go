package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// root is the repository's root, the working directory of every process the
// test starts, so that the kits' commands read as kits/README.md gives them.
var root string

// bin holds the webhooks and goreceiver binaries, built once for the package.
var bin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	if root, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, "kits/e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kits-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kits/e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = dir
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kits/e2e: the go command is needed to build webhooks and the Go example receiver:", err)
		return 1
	}
	// One go build for both, so that they compile together.
	build := exec.Command(gobin, "build", "-o", dir+string(filepath.Separator), "./cmd/webhooks", "./kits/e2e/goreceiver")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "kits/e2e: go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
