package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// relayLine is one line of the service's stream (internal/httpapi's).
type relayLine struct {
	Type       string              `json:"type"`
	ID         string              `json:"id"`
	DeliveryID string              `json:"delivery_id"`
	Headers    map[string][]string `json:"headers"`
	Body       []byte              `json:"body"`
}

// connectLoop holds the endpoint's connection until ctx ends, dialing
// again after every drop, with a backoff while the service cannot be
// reached. It returns early only on an answer no retry mends.
func (r *relayer) connectLoop(ctx context.Context, path string) error {
	var forwards sync.WaitGroup
	defer forwards.Wait() // the answers of what was forwarded are reported
	slots := make(chan struct{}, relayInFlight)
	backoff := 250 * time.Millisecond
	connected := false
	for ctx.Err() == nil {
		held, err := r.stream(ctx, path, func(l *relayLine) {
			// The slot is taken by the forward, not the reader: a reader
			// that waited would look like a dead connection. The service
			// caps the attempts in flight to the endpoint.
			forwards.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				r.forward(ctx, path, l)
			})
		}, func() {
			if connected {
				r.printf("Reconnected.\n")
			} else {
				r.printf("Connected: waiting for deliveries. Ctrl-C to stop.\n")
			}
			connected = true
		})
		if ctx.Err() != nil {
			return nil
		}
		var fatal errFatal
		if errors.As(err, &fatal) {
			return fatal.error
		}
		if held {
			backoff = 250 * time.Millisecond
		}
		r.printf("Connection lost (%v); reconnecting in %s.\n", err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, relayMaxBackoff)
	}
	return nil
}

// stream makes one connection and reads it until it ends; held says
// whether it got as far as holding the endpoint.
func (r *relayer) stream(ctx context.Context, path string, request func(*relayLine), onConnected func()) (held bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.api+path+"/relay", nil)
	if err != nil {
		return false, errFatal{err, 0}
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	resp, err := r.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, apiError(resp.StatusCode, raw)
	}
	// A connection silent for relayIdle is dead: cancel it.
	var silent atomic.Bool
	idle := time.AfterFunc(relayIdle, func() { silent.Store(true); cancel() })
	defer idle.Stop()
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			if silent.Load() {
				return held, fmt.Errorf("nothing from the service for %s", relayIdle)
			}
			return held, err
		}
		idle.Reset(relayIdle)
		var l relayLine
		if err := json.Unmarshal(line, &l); err != nil {
			return held, fmt.Errorf("unreadable line from the service: %w", err)
		}
		switch l.Type {
		case "connected":
			held = true
			onConnected()
		case "request":
			request(&l)
		}
	}
}

// forward POSTs one request to the local URL, exactly as the service
// signed it, and reports the answer.
func (r *relayer) forward(ctx context.Context, path string, l *relayLine) {
	started := time.Now()
	answer := map[string]any{"request_id": l.ID}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), relayForwardTimeout)
	defer cancel()
	status, body, err := r.post(fctx, l)
	took := time.Since(started)
	answer["duration_ms"] = took.Milliseconds()
	event := first(l.Headers["Factuarea-Event-Type"]) + " " + first(l.Headers["Factuarea-Event-Id"])
	if err != nil {
		answer["error"] = err.Error()
		r.printf("%s %s -> error: %v\n", started.Format(time.TimeOnly), event, err)
	} else {
		answer["status"], answer["body"] = status, body
		r.printf("%s %s -> %d (%d ms)\n", started.Format(time.TimeOnly), event, status, took.Milliseconds())
	}
	// The attempt waits for this answer: report it even while the command
	// is stopping, and again if the call fails on the way.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), relayForwardTimeout)
	defer rcancel()
	for try := 0; ; try++ {
		err := r.call(rctx, http.MethodPost, path+"/relay/answers", answer, nil)
		var fatal errFatal
		switch {
		case err == nil:
			return
		case errors.As(err, &fatal):
			// 404: the attempt gave up waiting (a timeout, a lost
			// connection): it is retried on the schedule.
			r.printf("  (answer not recorded: %v)\n", err)
			return
		case rctx.Err() != nil:
			r.printf("  (answer not recorded: %v)\n", err)
			return
		}
		time.Sleep(time.Duration(try+1) * 200 * time.Millisecond)
	}
}

// post makes the local request and reads its answer as the service
// would: at most webhooks.MaxResponseRead, of which the first
// webhooks.MaxResponseKept bytes are kept.
func (r *relayer) post(ctx context.Context, l *relayLine) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.forwardTo, bytes.NewReader(l.Body))
	if err != nil {
		return 0, "", err
	}
	for name, values := range l.Headers {
		req.Header[name] = values
	}
	// One forward is one request: without GetBody the transport does not
	// send it again by itself (see delivery.NewRequest).
	req.GetBody = nil
	resp, err := localClient.Do(req)
	var uerr *url.Error
	if errors.As(err, &uerr) {
		// Recorded on the attempt without the URL, as the service's own
		// errors are.
		err = uerr.Err
	}
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, webhooks.MaxResponseRead))
	if err != nil {
		return 0, "", fmt.Errorf("incomplete answer: %w", err)
	}
	return resp.StatusCode, string(body[:min(len(body), webhooks.MaxResponseKept)]), nil
}

// localClient forwards: redirects are not followed, as the service does
// not follow them (a 3xx is a retryable failure).
var localClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
