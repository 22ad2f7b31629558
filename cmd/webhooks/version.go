package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/factuarea/webhooks/internal/build"
)

// writeVersion prints `webhooks version`: the module version, the VCS
// revision it was built from, and the Go toolchain. For the binary's own
// information (build.Info) the version is build.Version, the one the
// service gives everywhere else.
func writeVersion(w io.Writer, info *debug.BuildInfo, ok bool) {
	fmt.Fprintf(w, "webhooks %s\n", build.VersionOf(info, ok))
	if !ok {
		fmt.Fprintln(w, "no build information (built without module support)")
		return
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev, when := settings["vcs.revision"], settings["vcs.time"]
	if rev == "" {
		// `go install …@version` builds from the module proxy, without
		// the repository: a pseudo-version still ends with the revision.
		if parts := strings.Split(strings.TrimSuffix(info.Main.Version, "+incompatible"), "-"); len(parts) >= 3 && len(parts[len(parts)-1]) == 12 {
			rev = parts[len(parts)-1]
		}
	}
	switch {
	case rev == "" && info.Main.Version == "(devel)":
		fmt.Fprintln(w, "revision not recorded: built outside a git clone, or with -buildvcs=false (make build records it)")
	case rev == "":
		fmt.Fprintln(w, "revision not recorded (the version names the release)")
	default:
		line := "revision " + rev
		if when != "" {
			line += ", committed " + when
		}
		if settings["vcs.modified"] == "true" {
			line += ", with uncommitted changes"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "built with %s for %s/%s\n", info.GoVersion, runtime.GOOS, runtime.GOARCH)
}
