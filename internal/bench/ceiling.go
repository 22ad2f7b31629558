package bench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ceilingBody is the size of the POSTs the ceiling is measured with: about
// what a delivery of the bench's events weighs with its headers.
const ceilingBody = 1024

// loopbackCeiling measures the requests per second a Go client and a Go
// server exchange over loopback, 1 KiB POSTs with producers requests in
// flight, on host, for d: the most the machine can do of the HTTP
// exchanges a delivery needs, so that every scenario's figure can be
// read as a share of it, measured in the same run on the same noisy
// machine. One event per request costs two exchanges per delivery (the
// producer's and the delivery), so the physical limit is about half the
// ceiling; batches share the first and bring it near the whole.
func loopbackCeiling(ctx context.Context, host string, producers int, d time.Duration) (float64, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go srv.Serve(ln)
	defer srv.Close()

	url := "http://" + ln.Addr().String() + "/"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: producers, MaxIdleConns: producers}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	body := bytes.Repeat([]byte("x"), ceilingBody)

	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var done atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				req, err := http.NewRequestWithContext(runCtx, http.MethodPost, url, bytes.NewReader(body))
				if err != nil {
					failed.Store(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					if runCtx.Err() == nil {
						failed.Store(err)
					}
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	return float64(done.Load()) / time.Since(start).Seconds(), nil
}
