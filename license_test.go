package webhooks_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// apache2SHA256 is the SHA-256 of the Apache License 2.0's text as the
// Apache Software Foundation publishes it
// (https://www.apache.org/licenses/LICENSE-2.0.txt).
const apache2SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestLicense: the whole repository, the kits included, is under the
// Apache License 2.0 (SPEC 12): LICENSE at the root is its text, every
// other LICENSE file (each kit keeps one, since a kit is installed from
// its folder) is the same file, every package's metadata says
// Apache-2.0, and so does the OpenAPI document.
func TestLicense(t *testing.T) {
	root, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatalf("the repository has no LICENSE at its root: %v", err)
	}
	if sum := sha256.Sum256(root); hex.EncodeToString(sum[:]) != apache2SHA256 {
		t.Errorf("LICENSE: got a text of SHA-256 %x, want the Apache License 2.0's (%s)", sum, apache2SHA256)
	}

	var licenses, packages []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == ".git" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		switch name := d.Name(); {
		case path != "LICENSE" && (strings.HasPrefix(name, "LICENSE") || strings.HasPrefix(name, "LICENCE") || strings.HasPrefix(name, "COPYING")):
			licenses = append(licenses, path)
		case name == "package.json", name == "package-lock.json", name == "composer.json", name == "pyproject.toml":
			packages = append(packages, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kits/node/LICENSE", "kits/python/LICENSE", "kits/php/LICENSE"} {
		if !slices.Contains(licenses, filepath.FromSlash(want)) {
			t.Errorf("%s is missing: a kit is installed from its folder, which must hold the licence", want)
		}
	}
	for _, path := range licenses {
		if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, root) {
			t.Errorf("%s is not the root LICENSE, the Apache License 2.0 (%v)", path, err)
		}
	}
	for _, want := range []string{"kits/node/package.json", "kits/node/package-lock.json", "kits/python/pyproject.toml", "kits/php/composer.json",
		"kits/e2e/node/package.json", "tools/openapi-lint/package.json"} {
		if !slices.Contains(packages, filepath.FromSlash(want)) {
			t.Errorf("%s is missing", want)
		}
	}
	for _, path := range packages {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := packageLicense(t, path, b); got != "Apache-2.0" {
			t.Errorf("%s: got licence %q, want Apache-2.0", path, got)
		}
	}

	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("internal", "httpapi", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if l := doc.Info.License; l == nil || l.Name != "Apache-2.0" || l.URL != "https://www.apache.org/licenses/LICENSE-2.0" {
		t.Errorf("openapi.yaml's info.license: got %+v, want Apache-2.0, https://www.apache.org/licenses/LICENSE-2.0", l)
	}
}

// packageLicense returns the licence a package's metadata declares, or
// a description of what is wrong with it.
func packageLicense(t *testing.T, path string, b []byte) string {
	t.Helper()
	switch filepath.Base(path) {
	case "package.json", "composer.json":
		var pkg struct {
			License any `json:"license"`
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if s, ok := pkg.License.(string); ok {
			return s
		}
		return "not one SPDX identifier"
	case "package-lock.json":
		// The lockfile repeats the package's own licence.
		var lock struct {
			Packages map[string]struct {
				License string `json:"license"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(b, &lock); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return lock.Packages[""].License
	case "pyproject.toml":
		// No TOML reader in the standard library: the [project] table's
		// license line and its licence classifiers, which must agree.
		license, section := "", ""
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case strings.HasPrefix(line, "["):
				section = line
			case section == "[project]" && (strings.HasPrefix(line, "license ") || strings.HasPrefix(line, "license=")):
				license = line
			case strings.Contains(line, `"License :: `) && line != `"License :: OSI Approved :: Apache Software License",`:
				return "classifier " + line
			}
		}
		if license != `license = { text = "Apache-2.0" }` {
			return license
		}
		return "Apache-2.0"
	}
	return ""
}
