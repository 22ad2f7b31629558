// Package build says which build of the service is running: one version,
// read once from what the Go command recorded in the binary, that every
// place the service names its version uses (the User-Agent of its
// webhook requests and of the probe's, the tracing resource's
// service.version, `webhooks version` and the start-up log line).
package build

import (
	"runtime/debug"
	"sync"
)

// Devel is the version of a build the Go command recorded no version of:
// built outside a git checkout or with -buildvcs=false, or from a binary
// without module information. It is the Go command's own word for it.
const Devel = "(devel)"

// Info returns the build information the Go command recorded in the
// binary (debug.ReadBuildInfo), read once.
var Info = sync.OnceValues(debug.ReadBuildInfo)

// Version returns the version of the module the binary was built from:
// v1.2.3 for `go install …@v1.2.3`, a pseudo-version
// (v0.0.0-20261201150308-b2e46cc1a2b3, "+dirty" with uncommitted changes)
// for a build in a checkout, Devel when it recorded none.
func Version() string { return version() }

var version = sync.OnceValue(func() string { return VersionOf(Info()) })

// VersionOf returns the version that info, as debug.ReadBuildInfo returns
// it, records: Version's, for other build information (tests).
func VersionOf(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil || info.Main.Version == "" {
		return Devel
	}
	return info.Main.Version
}
