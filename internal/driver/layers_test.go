package driver_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBackendsImportNothingAbove: a storage backend imports the domain,
// this contract and its own helpers, never the use cases, the queue core,
// the engine or anything above them, so that it cannot call back up.
func TestBackendsImportNothingAbove(t *testing.T) {
	allowed := map[string]bool{
		"github.com/factuarea/webhooks":                  true,
		"github.com/factuarea/webhooks/signature":        true,
		"github.com/factuarea/webhooks/internal/driver":  true,
		"github.com/factuarea/webhooks/internal/migrate": true,
		// The stored form of a body: a leaf both backends use, like migrate.
		"github.com/factuarea/webhooks/internal/bodycodec": true,
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		pkg := "github.com/factuarea/webhooks/internal/" + backend
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == pkg || !strings.HasPrefix(dep, "github.com/factuarea/webhooks") {
				continue
			}
			if !allowed[dep] {
				t.Errorf("%s depends on %s: a backend may depend on the domain and internal/driver only", backend, dep)
			}
		}
	}
}
