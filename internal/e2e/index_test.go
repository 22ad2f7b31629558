package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// checkIndex: GET / answers where things are, without a key: JSON to a
// client that asks for it, a page with the same links to anyone else, and
// each link answers.
func checkIndex(t *testing.T, ts *testService) {
	t.Helper()
	get := func(accept string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", ts.url+"/", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET / (Accept %q): %v", accept, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("application/json")
	var index struct {
		Links map[string]string `json:"links"`
	}
	if err := json.Unmarshal([]byte(body), &index); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET / with Accept: application/json: got %d %s %s (%v), want 200 and the index as JSON", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
	}
	for _, name := range []string{"portal", "api_reference", "health", "readiness"} {
		if index.Links[name] == "" {
			t.Errorf("GET /: no %s link in %s", name, body)
		}
	}
	for _, accept := range []string{"", "*/*", "text/html,application/xhtml+xml,*/*;q=0.8"} {
		resp, page := get(accept)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET / with Accept %q: got %d %s, want 200 and a page", accept, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, path := range index.Links {
			if !strings.Contains(page, `href="`+path+`"`) {
				t.Errorf("GET / with Accept %q: the page does not link %s:\n%s", accept, path, page)
			}
		}
	}
	for name, path := range index.Links {
		resp, err := http.Get(ts.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// The portal without a session says to ask for a link (401).
		if want := map[bool]int{true: 401, false: 200}[name == "portal"]; resp.StatusCode != want {
			t.Errorf("the index's %s link %s: got %d, want %d", name, path, resp.StatusCode, want)
		}
	}
}

func TestIndex(t *testing.T) {
	checkIndex(t, startService(t, ""))
}
