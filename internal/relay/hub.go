package relay

import (
	"cmp"
	"log/slog"
	"sync"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// Defaults of Config.
const (
	DefaultPoll    = 50 * time.Millisecond
	DefaultMaxWait = 10 * time.Second
)

// Config configures a Hub. Zero fields take the defaults.
type Config struct {
	Store driver.Relay
	// Poll is how often a waiting attempt, and a connection, look at the
	// mailbox for what another process put there: what this process puts
	// wakes them at once.
	Poll time.Duration
	// MaxWait is the longest an attempt waits for its answer: the
	// engine's attempt timeout. A request older than twice that is an
	// orphan (its attempt's process died) and is dropped, never sent.
	MaxWait time.Duration
	// Lease and Renew are a connection's hold on its endpoint and how
	// often it renews it (webhooks.RelayLease, webhooks.RelayRenew).
	Lease, Renew time.Duration
	Now          func() time.Time
	Logger       *slog.Logger
}

// Hub is one process's side of the relay: the connections it holds, and
// the attempts it waits on.
type Hub struct {
	cfg Config

	mu       sync.Mutex
	sessions map[string]*session      // by endpoint id: the connections this process holds
	waiters  map[string]chan struct{} // by request id: this process's attempts waiting
	closed   bool                     // see Shutdown
	all      map[*session]struct{}    // every session, to end them at shutdown
}

// New returns a hub on cfg.Store.
func New(cfg Config) *Hub {
	cfg.Poll = cmp.Or(cfg.Poll, DefaultPoll)
	cfg.MaxWait = cmp.Or(cfg.MaxWait, DefaultMaxWait)
	cfg.Lease = cmp.Or(cfg.Lease, webhooks.RelayLease)
	cfg.Renew = cmp.Or(cfg.Renew, webhooks.RelayRenew)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Hub{cfg: cfg, sessions: map[string]*session{}, waiters: map[string]chan struct{}{}, all: map[*session]struct{}{}}
}

// wake signals c without blocking: one pending signal is enough.
func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
