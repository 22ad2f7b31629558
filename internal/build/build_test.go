package build

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: the module's version as the Go command recorded it, and
// Devel when it recorded none; Version is that of the binary's own
// information.
func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, true, "v1.4.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201150308-b2e46cc1a2b3+dirty"}}, true, "v0.0.0-20261201150308-b2e46cc1a2b3+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, Devel},
		{&debug.BuildInfo{}, true, Devel},
		{nil, false, Devel},
	} {
		if got := VersionOf(tc.info, tc.ok); got != tc.want {
			t.Errorf("VersionOf(%+v, %t): got %q, want %q", tc.info, tc.ok, got, tc.want)
		}
	}
	info, ok := debug.ReadBuildInfo()
	if got, want := Version(), VersionOf(info, ok); got != want {
		t.Errorf("Version: got %q, want %q, the binary's", got, want)
	}
}
