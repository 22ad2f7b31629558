package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the client importable without the service: besides
// the standard library it depends on nothing, not the service's packages
// (internal/…), not a database driver, not the root package (which pulls
// in a UUID library). Test files are not part of what a producer imports,
// so the service these tests start does not count.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	const self = "github.com/factuarea/webhooks/client"
	out, err := exec.Command(gobin, "list", "-deps",
		"-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", self).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	for _, pkg := range pkgs {
		if pkg != self {
			t.Errorf("the client depends on %s; want the standard library only", pkg)
		}
	}
	if len(pkgs) != 1 {
		t.Errorf("got %d non-standard packages in the listing (%q), want 1 (the client itself)", len(pkgs), pkgs)
	}
}
