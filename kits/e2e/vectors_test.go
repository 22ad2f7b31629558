package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// vectorFiles are the shared vectors (SPEC sections 10 and 15) that the
// sender, every kit and the probe must pass, and the secrets a kit set up
// for Standard Webhooks takes or refuses, with the one message every kit
// refuses them with (standard-secrets.json, from the Go kit's own).
var vectorFiles = []string{"signature-vectors.json", "standard-webhooks-vectors.json", "standard-secrets.json"}

// vectorCopies are the folders where each kit keeps its copies, for its own
// tests to read without reaching outside the kit.
var vectorCopies = []struct{ kit, dir string }{
	{"node", "kits/node/test"},
	{"python", "kits/python/tests/testdata"},
	{"php", "kits/php/tests"},
}

// TestVectors_KitCopies checks that every kit's copy of the vectors is byte
// for byte the Go kit's, in signature/testdata: a kit whose copy drifted
// would pass its own tests against vectors the others do not pass. A missing
// copy fails.
func TestVectors_KitCopies(t *testing.T) {
	for _, name := range vectorFiles {
		want, err := os.ReadFile(filepath.Join(root, "signature", "testdata", name))
		if err != nil {
			t.Fatalf("the Go kit's vectors: %v", err)
		}
		if len(want) == 0 {
			t.Fatalf("signature/testdata/%s is empty", name)
		}
		for _, c := range vectorCopies {
			path := filepath.Join(c.dir, name)
			got, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Errorf("the %s kit's copy: %v", c.kit, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s (%d bytes) differs from signature/testdata/%s (%d bytes) at byte %d: copy it again",
					path, len(got), name, len(want), firstDifference(got, want))
			}
		}
	}
}

// firstDifference returns the offset of the first byte where a and b differ.
func firstDifference(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
