package receiver_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the kit importable on its own: besides the standard
// library it may depend on the signature package only, never on the
// service's packages, a database driver or a router. (Test files are not
// part of what a customer imports, so the drivers they use do not count.)
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps",
		"-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/factuarea/webhooks/receiver").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/factuarea/webhooks/receiver":  true,
		"github.com/factuarea/webhooks/signature": true,
	}
	seen := 0
	for _, pkg := range strings.Fields(string(out)) {
		seen++
		if !allowed[pkg] {
			t.Errorf("receiver depends on %s; want only the standard library and signature", pkg)
		}
	}
	if seen != len(allowed) {
		t.Errorf("got %d non-standard packages in the listing (%q), want %d", seen, out, len(allowed))
	}
}
