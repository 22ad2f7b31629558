package httpapi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lintDir holds the linter: Redocly CLI at the version its lockfile pins,
// and its configuration (the recommended rules).
var lintDir = filepath.Join("..", "..", "tools", "openapi-lint")

// TestOpenAPI_Lint runs Redocly CLI's recommended rules on openapi.yaml:
// an independent reading of the document, beside the contract test's,
// that must find no error and no warning (a route added without a 2xx or
// a 4xx answer, an unused component, a schema that requires a property it
// does not define…). It needs Node.js and the pinned linter: `make tools`.
func TestOpenAPI_Lint(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("Node.js is needed to run Redocly CLI (apt-get install nodejs npm), then `make tools`")
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(lintDir, "package-lock.json"))
	if err == nil {
		err = json.Unmarshal(b, &lock)
	}
	if err != nil {
		t.Fatalf("tools/openapi-lint/package-lock.json: %v", err)
	}
	want := lock.Packages["node_modules/@redocly/cli"].Version
	var installed struct {
		Version string `json:"version"`
	}
	b, err = os.ReadFile(filepath.Join(lintDir, "node_modules", "@redocly", "cli", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &installed)
	}
	if err != nil || installed.Version != want {
		t.Fatalf("Redocly CLI %s (the lockfile's) is not installed in tools/openapi-lint (found %q, %v): run `make tools`", want, installed.Version, err)
	}

	doc, err := filepath.Abs("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join("node_modules", ".bin", "redocly"), "lint", "--config", "redocly.yaml", "--format", "json", doc)
	cmd.Dir = lintDir
	// No telemetry and no update check: the test talks to no one.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
			Ignored  int `json:"ignored"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("redocly lint: %v, %v\n%s\n%s", runErr, err, out, stderr.String())
	}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	if report.Totals.Errors+report.Totals.Warnings+report.Totals.Ignored != 0 || runErr != nil {
		t.Errorf("redocly lint: %d errors, %d warnings, %d ignored (%v), want none", report.Totals.Errors, report.Totals.Warnings, report.Totals.Ignored, runErr)
	}
}
