package webhooks_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wireName matches the strings that are part of what goes on the wire and
// that the sender, the probe and the receiver kit must agree on: header
// names and payload versions.
var wireName = regexp.MustCompile(`^(Factuarea-[A-Za-z-]+|Idempotency-Key|\d{4}-\d{2}-\d{2})$`)

// TestWireNamesDefinedOnce: every wire name is a constant of one package,
// which the others use, so that a new header or payload version is one
// edit. Header names used to be defined in internal/delivery and in
// receiver, and payload versions in internal/probe and here.
func TestWireNamesDefinedOnce(t *testing.T) {
	where := map[string][]string{} // value: "package.Name" of each constant
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err == nil && wireName.MatchString(s) {
						pkg := filepath.Dir(path)
						if pkg == "." {
							pkg = "webhooks"
						}
						where[s] = append(where[s], pkg+"."+vs.Names[i].Name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(where) < 6 {
		t.Fatalf("found %d wire names (%v); want the headers and payload versions", len(where), where)
	}
	for value, defs := range where {
		slices.Sort(defs)
		if len(defs) > 1 {
			t.Errorf("%q is defined %d times: %s; define it once and use that", value, len(defs), strings.Join(defs, ", "))
		}
	}
}
