package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// relayer is `webhooks listen --forward-to`: the developer's side of the
// local relay (SPEC 20). It holds one relay endpoint's connection to the
// service, reconnecting after any drop, and forwards each request down
// it to the local URL.
type relayer struct {
	forwardTo, api, key        string
	company, account, endpoint string
	events                     string
	livemode                   bool
	out, stderr                io.Writer

	base   string // the API path of the endpoint
	client *http.Client
	mu     sync.Mutex // serializes the output's lines
}

// Timings of the relay's side. A request is answered within the service's
// attempt timeout (10 s by default) or its attempt fails and is retried,
// so the forward is bounded just below it.
const (
	relayForwardTimeout = 9 * time.Second
	// relayIdle: the service writes a line every webhooks.RelayRenew; a
	// connection silent for three of them is dead (a network that drops
	// without a reset), and is dialed again.
	relayIdle       = 3 * webhooks.RelayRenew
	relayMaxBackoff = 5 * time.Second
	relayInFlight   = 16 // forwards at once
)

// errFatal marks an answer of the service that reconnecting cannot mend
// (a wrong key, an endpoint deleted meanwhile).
type errFatal struct {
	error
	status int
}

func (r *relayer) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format, args...)
}

// check validates the flags, before anything is created.
func (r *relayer) check() error {
	u, err := url.Parse(r.forwardTo)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward-to must be an http or https URL, such as http://localhost:3000/webhooks (got %q)", r.forwardTo)
	}
	a, err := url.Parse(r.api)
	if err != nil || (a.Scheme != "http" && a.Scheme != "https") || a.Host == "" {
		return fmt.Errorf("--api must be the service's http or https URL, such as https://hooks.example.com (got %q)", r.api)
	}
	r.api = strings.TrimRight(r.api, "/")
	if r.key == "" {
		return errors.New("--key (or $WEBHOOKS_API_KEY) is required: the account key the relay endpoint is created with")
	}
	switch {
	case (r.company == "") == (r.account == ""):
		return errors.New("give one of --company or --account: whose events to relay")
	case r.company != "":
		r.base = "/v1/companies/" + url.PathEscape(r.company) + "/webhook_endpoints"
	default:
		r.base = "/v1/accounts/" + url.PathEscape(r.account) + "/webhook_endpoints"
	}
	return nil
}

// run relays until ctx ends, then deletes the relay endpoint.
func (r *relayer) run(ctx context.Context) error {
	if err := r.check(); err != nil {
		return err
	}
	// No timeout on the client: the stream lasts. A service that accepts
	// the connection and never answers is given up on all the same.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = 30 * time.Second
	r.client = &http.Client{Transport: transport}
	id, secret, err := r.setUp(ctx)
	if err != nil {
		return err
	}
	r.printf("Relay endpoint %s (events: %s)\nSigning secret: %s\nForwarding to %s\n", id, r.events, secret, r.forwardTo)
	r.printf("If this command is killed, resume with --endpoint %s; it deletes the endpoint when it exits.\n", id)
	path := r.base + "/" + id
	err = r.connectLoop(ctx, path)
	// Deleted on exit, however it ended but a kill: the deliveries still
	// pending end failed (endpoint_deleted), as any endpoint's.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	derr := r.call(dctx, http.MethodDelete, path, nil, nil)
	var gone errFatal
	switch {
	case errors.As(derr, &gone) && gone.status == http.StatusNotFound:
		r.printf("Relay endpoint %s was deleted meanwhile.\n", id)
	case derr != nil:
		r.printf("Could not delete relay endpoint %s: %v\n", id, derr)
		return errors.Join(err, derr)
	default:
		r.printf("Deleted relay endpoint %s.\n", id)
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// setUp creates the relay endpoint, or checks the one to resume, and
// returns its id and secret.
func (r *relayer) setUp(ctx context.Context) (string, string, error) {
	if r.endpoint != "" {
		var ep struct {
			ID            string   `json:"id"`
			Relay         bool     `json:"relay"`
			EnabledEvents []string `json:"enabled_events"`
		}
		path := r.base + "/" + url.PathEscape(r.endpoint)
		if err := r.call(ctx, http.MethodGet, path, nil, &ep); err != nil {
			return "", "", fmt.Errorf("resume %s: %w", r.endpoint, err)
		}
		if !ep.Relay {
			return "", "", fmt.Errorf("--endpoint %s is not a relay endpoint: give the id a listen printed", r.endpoint)
		}
		var sec struct {
			Secret string `json:"secret"`
		}
		if err := r.call(ctx, http.MethodGet, path+"/secret", nil, &sec); err != nil {
			return "", "", err
		}
		// What it relays is what it was created with, not --events.
		r.events = strings.Join(ep.EnabledEvents, ",")
		return ep.ID, sec.Secret, nil
	}
	host, _ := os.Hostname()
	events := strings.Split(r.events, ",")
	for i, e := range events {
		events[i] = strings.TrimSpace(e)
	}
	in := map[string]any{
		"relay": true, "enabled_events": events, "livemode": r.livemode,
		"description": "webhooks listen on " + host,
	}
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if err := r.call(ctx, http.MethodPost, r.base, in, &ep); err != nil {
		return "", "", fmt.Errorf("create the relay endpoint: %w", err)
	}
	return ep.ID, ep.Secret, nil
}

// call makes an API call with the key, decoding a 2xx answer into out.
func (r *relayer) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.api+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		return apiError(resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// apiError is the service's error answer as a Go error: its code and
// message.
func apiError(status int, raw []byte) error {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Code != "" {
		err := fmt.Errorf("%d %s: %s", status, e.Error.Code, e.Error.Message)
		if status < 500 && status != http.StatusTooManyRequests {
			return errFatal{err, status}
		}
		return err
	}
	return fmt.Errorf("the service answered %d", status)
}
