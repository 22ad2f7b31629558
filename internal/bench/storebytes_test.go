package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestStoreBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "# HELP webhooks_store_bytes x\n# TYPE webhooks_store_bytes gauge\nwebhooks_store_bytes_other 1\nwebhooks_store_bytes 1.2345e+08\n")
	}))
	defer srv.Close()
	if got := storeBytes(scrapeAll(srv.Client(), []string{srv.URL})); got != 123450000 {
		t.Errorf("storeBytes: got %d, want 123450000", got)
	}
	if got := storeBytes(scrapeAll(srv.Client(), []string{srv.URL + "/elsewhere"})); got != -1 {
		t.Errorf("storeBytes of a service without the gauge: got %d, want -1", got)
	}
	if got, want := storeLine(1<<20, 1<<20+3000*1500, 3000), "  store: 1500 bytes per event (grew 4MiB over 3000 events; 5MiB now)\n"; got != want {
		t.Errorf("storeLine: got %q, want %q", got, want)
	}
	if got := storeLine(-1, 5, 10); got != "" {
		t.Errorf("storeLine without the gauge: got %q, want none", got)
	}
}
