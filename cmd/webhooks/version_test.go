package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestWriteVersion: the version, then the revision from the VCS stamp, or
// from a pseudo-version when the build had no repository (go install
// …@latest builds from the module proxy), then the toolchain.
func TestWriteVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		info     debug.BuildInfo
		want     []string
		wantNone string
	}{
		{"checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201150308-b2e46cc1a2b3+dirty"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "b2e46cc1a2b3c4d5e6f708192a3b4c5d6e7f8091"}, {Key: "vcs.time", Value: "2026-12-01T15:03:08Z"}, {Key: "vcs.modified", Value: "true"}}},
			[]string{"webhooks v0.0.0-20261201150308-b2e46cc1a2b3+dirty\n", "revision b2e46cc1a2b3c4d5e6f708192a3b4c5d6e7f8091, committed 2026-12-01T15:03:08Z, with uncommitted changes\n", "built with go1.26.8 for "}, ""},
		{"module proxy, pseudo-version", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.2.1-0.20261201150308-b2e46cc1a2b3"}},
			[]string{"webhooks v0.2.1-0.20261201150308-b2e46cc1a2b3\n", "revision b2e46cc1a2b3\n"}, "uncommitted"},
		{"module proxy, release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}},
			[]string{"webhooks v1.4.0\n", "revision not recorded (the version names the release)"}, "committed"},
		{"no VCS stamp", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			[]string{"webhooks (devel)\n", "revision not recorded: built outside a git clone"}, "names the release"},
	} {
		var b bytes.Buffer
		writeVersion(&b, &tc.info, true)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: got\n%s\nwant %q", tc.name, b.String(), w)
			}
		}
		if tc.wantNone != "" && strings.Contains(b.String(), tc.wantNone) {
			t.Errorf("%s: got\n%s\nwant no %q", tc.name, b.String(), tc.wantNone)
		}
	}
}

// TestVersion_Binary builds the command as `make build` does and runs
// `webhooks version` and `webhooks --version`: both print the module
// version and the VCS revision the Go command stamped into the binary.
// The Go command stamps a build only in a repository whose .git is a
// folder: in a git worktree (where .git is a file) the test builds a
// fresh clone of HEAD instead.
func TestVersion_Binary(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: a build records its revision only in a git checkout")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v (the test runs in the project's git checkout)", err)
	}
	root := strings.TrimSpace(string(top))
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		clone := filepath.Join(t.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		root = clone
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "webhooks")
	// The flags of make build: -buildvcs=auto stamps the revision even
	// where GOFLAGS turns stamping off.
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, "./cmd/webhooks")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	rev := ""
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			rev = s.Value
		}
	}
	if rev != strings.TrimSpace(string(head)) {
		t.Fatalf("the binary records revision %q, want HEAD %s", rev, head)
	}
	for _, arg := range []string{"version", "--version", "-version"} {
		out, err := exec.Command(bin, arg).CombinedOutput()
		if err != nil {
			t.Errorf("webhooks %s: %v\n%s", arg, err, out)
			continue
		}
		if !strings.HasPrefix(string(out), "webhooks "+info.Main.Version+"\n") || !strings.Contains(string(out), "revision "+rev) {
			t.Errorf("webhooks %s: got\n%s\nwant version %s and revision %s", arg, out, info.Main.Version, rev)
		}
	}
}

// TestVersion_OneSource: the service says one version, the build's, that
// `webhooks version` prints: in the User-Agent of a real attempt
// (Factuarea-Webhooks/<version>), in the probe's (Factuarea-Webhooks-Probe/
// <version>), as the tracing resource's service.version and in the
// start-up line.
func TestVersion_OneSource(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	version, ok := strings.CutPrefix(first, "webhooks ")
	if !ok || version == "" {
		t.Fatalf("webhooks version: got %q, want webhooks <version> first", out.String())
	}

	c, collector := newOTLPCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // ms: export at once
	delivered := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case delivered <- r.Header.Get("User-Agent"):
		default:
		}
	}))
	defer receiver.Close()
	base, data, logs := serveInProcess(t, map[string]string{"WEBHOOKS_ALLOW_HTTP": "true", "WEBHOOKS_ALLOW_NETWORKS": "127.0.0.0/8"}, "-addr", "127.0.0.1:0")
	if line := startupLine(t, logs.String()); !strings.Contains(line, " version="+version+" ") && !strings.HasSuffix(line, " version="+version) {
		t.Errorf("start-up line %q: want version=%s", line, version)
	}
	raw, err := os.ReadFile(filepath.Join(data, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(raw))
	p := &process{url: base}
	account := p.api(t, key, "POST", "/v1/accounts", map[string]any{"name": "Acme"}, 201)["id"].(string)
	company := p.api(t, key, "POST", "/v1/companies", map[string]any{"account_id": account, "nif": "B12345674", "name": "Acme SL"}, 201)["id"].(string)
	p.api(t, key, "POST", "/v1/companies/"+company+"/webhook_endpoints", map[string]any{"url": receiver.URL, "enabled_events": []string{"*"}}, 201)
	p.api(t, key, "POST", "/v1/events", map[string]any{"type": "invoice.sent", "company_id": company, "data": map[string]any{"object": map[string]any{"id": "inv_1"}}}, 201)
	select {
	case ua := <-delivered:
		if want := "Factuarea-Webhooks/" + version; ua != want {
			t.Errorf("the attempt's User-Agent: got %q, want %q", ua, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery within 10 s")
	}
	deadline := time.After(10 * time.Second)
	for len(c.serviceVersions()) == 0 {
		select {
		case <-c.signal:
		case <-deadline:
			t.Fatal("the collector got no span within 10 s")
		}
	}
	for _, got := range c.serviceVersions() {
		if got != version {
			t.Errorf("the tracing resource's service.version: got %q, want %q", got, version)
		}
	}

	probed := make(chan string, 64)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case probed <- r.Header.Get("User-Agent"):
		default:
		}
	}))
	defer target.Close()
	// A receiver that takes everything fails the probe: only its requests
	// matter here.
	run(context.Background(), []string{"probe", "--url", target.URL, "--secret", "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "--repeat", "1"}, io.Discard, io.Discard)
	close(probed)
	n := 0
	for ua := range probed {
		n++
		if want := "Factuarea-Webhooks-Probe/" + version; ua != want {
			t.Errorf("the probe's User-Agent: got %q, want %q", ua, want)
			break
		}
	}
	if n == 0 {
		t.Error("the probe sent no request")
	}
}
