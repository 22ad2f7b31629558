package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// moduleVersion is the version of the module the binary was built from,
// as the Go command recorded it: v1.2.3 for `go install …@v1.2.3`, a
// pseudo-version (v0.0.0-20261201150308-b2e46cc1a2b3, "+dirty" with
// uncommitted changes) for a build in a checkout, "(devel)" when it knew
// none.
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return info.Main.Version
}

// writeVersion prints `webhooks version`: the module version, the VCS
// revision it was built from, and the Go toolchain.
func writeVersion(w io.Writer, info *debug.BuildInfo, ok bool) {
	if !ok {
		fmt.Fprintln(w, "webhooks: no build information (built without module support)")
		return
	}
	fmt.Fprintf(w, "webhooks %s\n", info.Main.Version)
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
