// Package service wires a backend, the delivery engine, the use cases, the
// JSON API and the portal into one running service: what `webhooks serve`
// runs, what `webhooks bench` runs in-process, and what the end-to-end
// tests start. It picks the backend from the database setting and holds
// the defaults the command's flags show.
package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/delivery"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/httpapi"
	"github.com/factuarea/webhooks/internal/maintenance"
	"github.com/factuarea/webhooks/internal/metrics"
	"github.com/factuarea/webhooks/internal/netguard"
	"github.com/factuarea/webhooks/internal/portal"
	"github.com/factuarea/webhooks/internal/postgres"
	"github.com/factuarea/webhooks/internal/queue"
	"github.com/factuarea/webhooks/internal/relay"
	"github.com/factuarea/webhooks/internal/session"
	"github.com/factuarea/webhooks/internal/sqlite"
	"github.com/factuarea/webhooks/internal/tracing"
)

// Config is the service's configuration. Zero fields take the defaults of
// SPEC section 12 (see cmd/webhooks for the flags and variables).
type Config struct {
	// Database is a SQLite file path (or "sqlite:" + path), or a
	// postgres:// URL.
	Database string
	// AdminKey is the platform's key. Every process on one database must
	// have the same: the first to start stores its hash, and a process
	// given another refuses to start (app.ErrAdminKeyMismatch). Empty
	// takes NewAdminKey's, on a database that has no admin key yet.
	AdminKey string
	// PreviousAdminKey, if set, lets AdminKey replace it: a database whose
	// admin key is PreviousAdminKey gets AdminKey instead, and every
	// process stops accepting the previous key within KeysRefresh.
	PreviousAdminKey string
	// NewAdminKey makes the admin key of a database that has none, when
	// AdminKey is empty (serve generates one into its data folder).
	NewAdminKey func() (string, error)
	// KeysRefresh is how often a process on a shared database reads the
	// cluster's keys again, to follow a rotation made by another process.
	// Defaults to 5 s.
	KeysRefresh time.Duration
	// Policy is the retry schedule. Nil Waits take the spec's schedule
	// (webhooks.DefaultRetryPolicy); an empty, non-nil list means no
	// retries: one attempt only.
	Policy webhooks.RetryPolicy
	// AttemptTimeout bounds each attempt. Defaults to 10 s.
	AttemptTimeout time.Duration
	// AllowNetworks are exempt from the SSRF guard.
	AllowNetworks []netip.Prefix
	// AllowHTTP lets live-mode endpoints use plain http.
	AllowHTTP bool
	// PublicURL is the base of the links the service gives out (portal
	// sessions). Defaults to DefaultPublicURL.
	PublicURL string
	// Concurrency caps attempts in flight in this process; PerEndpoint caps
	// them per endpoint across every process.
	Concurrency int
	PerEndpoint int
	// PollInterval is the delivery engine's safety-net poll.
	PollInterval time.Duration
	// Lease is how long a claim lasts before another process may take the
	// delivery over; it must exceed AttemptTimeout. Defaults to
	// AttemptTimeout plus 30 s.
	Lease time.Duration
	// DisableAfter is how long every attempt to an endpoint must have
	// failed before it is disabled (SPEC 14). Zero takes
	// webhooks.DefaultDisableAfter; a negative value never disables.
	DisableAfter time.Duration
	// BacklogAlert is how long an endpoint's oldest due delivery may wait
	// before webhook_endpoint.backlogged fires (SPEC 14). Zero takes
	// webhooks.DefaultBacklogAlert; a negative value never fires.
	BacklogAlert time.Duration
	// RecoveryProbe and RecoveryFor are how often, and for how long after
	// its disable, an endpoint disabled for failing that asks for
	// automatic recovery is probed (SPEC 14). Zero takes the defaults
	// (webhooks.DefaultRecoveryProbe, DefaultRecoveryFor).
	RecoveryProbe time.Duration
	RecoveryFor   time.Duration
	// BacklogInterval and RecoveryInterval are how often the backlog
	// alerts are checked and the due probes sent. Zero takes a tenth of
	// BacklogAlert (between 1 s and 30 s) and of RecoveryProbe (between 1
	// s and 1 min); tests on a fake clock set them.
	BacklogInterval  time.Duration
	RecoveryInterval time.Duration
	// Retention is how long events, deliveries and attempts are kept.
	// Defaults to 90 days.
	Retention time.Duration
	// PurgeInterval is how often the purge runs. Defaults to 10 minutes.
	PurgeInterval time.Duration
	// OutboxInterval is how often the outbox is drained unasked, beside
	// the drains its entries' transactions ask for. Defaults to 1 s.
	OutboxInterval time.Duration
	// EraseInterval is how often the erasure jobs are looked for unasked
	// (a deletion asks at once; this is what a process that died left).
	// Defaults to 5 s.
	EraseInterval time.Duration
	// ScrubInterval is how often, once something was erased or purged,
	// the erased bytes are made to leave the disk (driver.Maintenance.
	// Scrub: a WAL checkpoint on SQLite, a vacuum on PostgreSQL). Defaults
	// to 30 s: erased bytes are gone from the files within a minute.
	ScrubInterval time.Duration
	// ShutdownGrace is how long in-flight attempts may take to finish on
	// shutdown before they are handed back.
	ShutdownGrace time.Duration
	Logger        *slog.Logger
	// Tracing makes the spans of registrations and attempts (nil: off;
	// see tracing.FromEnv). The caller shuts it down after Run.
	Tracing *tracing.Tracing

	// For tests: the clock, the jitter's source, the resolver, and the
	// engine's and the outbox's hooks.
	Now      func() time.Time
	Random   func() float64
	Lookup   netguard.LookupNetIPFunc
	Recorded func([]*webhooks.AttemptRecord)
	Looked   func(now time.Time, claimed int)
	// Drained is app.Config.Drained: called after the outbox's drain
	// acted on entries.
	Drained func()
}

// Both backends are complete; PostgreSQL's is shared by several processes.
var (
	_ driver.Driver  = (*sqlite.Store)(nil)
	_ driver.Driver  = (*postgres.Store)(nil)
	_ driver.Cluster = (*postgres.Store)(nil)
)

// Service is the running service.
type Service struct {
	Store     driver.Driver
	Registrar *queue.Registrar
	Queue     *queue.Queue
	App       *app.App
	Engine    *delivery.Engine
	// Relay holds the local relay's connections (SPEC 20).
	Relay   *relay.Hub
	Handler http.Handler
	Guard   *netguard.Guard
	Metrics *metrics.Metrics

	cluster driver.Cluster // nil: no other process to hear from
	slots   *postgres.Slots
	// The background services (see background).
	outbox, notify, erase *maintenance.Periodic
	// scrubDue is set when something was erased or purged since the last
	// scrub (and at start on SQLite: what a crash left in the WAL).
	scrubDue atomic.Bool
	cfg      Config
}

// Open opens the store and builds the service; Run starts it.
func Open(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.AdminKey == "" && cfg.NewAdminKey == nil {
		return nil, errors.New("an admin key is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Policy.Waits == nil {
		cfg.Policy = webhooks.DefaultRetryPolicy()
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if cfg.Lease != 0 && cfg.Lease <= cmp.Or(cfg.AttemptTimeout, delivery.DefaultAttemptTimeout) {
		return nil, fmt.Errorf("lease %s must exceed the attempt timeout", cfg.Lease)
	}
	store, err := openBackend(ctx, cfg.Database, cfg.Logger)
	if err != nil {
		return nil, err
	}
	cluster, _ := store.(driver.Cluster)
	var opts []netguard.Option
	if cfg.Lookup != nil {
		opts = append(opts, netguard.WithLookupNetIP(cfg.Lookup))
	}
	guard := netguard.New(cfg.AllowNetworks, opts...)
	cfg.Retention = cmp.Or(cfg.Retention, DefaultRetention)
	cfg.PurgeInterval = cmp.Or(cfg.PurgeInterval, DefaultPurgeInterval)
	cfg.OutboxInterval = cmp.Or(cfg.OutboxInterval, DefaultOutboxInterval)
	cfg.EraseInterval = cmp.Or(cfg.EraseInterval, DefaultEraseInterval)
	cfg.ScrubInterval = cmp.Or(cfg.ScrubInterval, DefaultScrubInterval)
	s := &Service{Store: store, Guard: guard, Metrics: metrics.New(store, cfg.Now), cluster: cluster, cfg: cfg}
	s.outbox = &maintenance.Periodic{ServiceName: "outbox", Interval: cfg.OutboxInterval, First: time.Millisecond, Work: s.drainOutbox, Logger: cfg.Logger}
	s.erase = &maintenance.Periodic{ServiceName: "erase", Interval: cfg.EraseInterval, First: time.Second, Work: s.eraseJobs, Logger: cfg.Logger}
	// After a start on SQLite, what a crash left in the WAL; PostgreSQL
	// keeps no such thing across a restart.
	s.scrubDue.Store(cluster == nil)
	s.notify = &maintenance.Periodic{ServiceName: "notify", MinGap: notifyGap, Work: s.notifyOthers, Logger: cfg.Logger}
	s.Registrar = queue.NewRegistrar(store, s.announce)
	s.Queue = queue.NewQueue(store, queue.QueueConfig{
		Health: webhooks.HealthRule{DisableAfter: disableAfter(cfg.DisableAfter)}, Drain: s.outbox.Kick, Now: cfg.Now,
	})
	var slots driver.Semaphore
	if pg, ok := store.(*postgres.Store); ok {
		s.slots = pg.Slots()
		slots = s.slots
	}
	// Every attempt in flight may go to one host (a receiver with several
	// endpoints, say): keep that many connections to it, or each attempt
	// past the idle limit dials anew, and the sockets it leaves in
	// TIME_WAIT can run out the ports.
	transport := guard.Transport()
	concurrency := cmp.Or(cfg.Concurrency, delivery.DefaultConcurrency)
	transport.MaxIdleConnsPerHost = max(transport.MaxIdleConnsPerHost, concurrency)
	transport.MaxIdleConns = max(transport.MaxIdleConns, concurrency)
	// Alone on its database (SQLite), the process that makes a relay
	// endpoint's attempt holds its connection too, and they wake each
	// other: the mailbox's poll is a safety net only.
	relayPoll := time.Second
	if cluster != nil {
		relayPoll = relay.DefaultPoll
	}
	s.Relay = relay.New(relay.Config{
		Store: store, Poll: relayPoll, MaxWait: cmp.Or(cfg.AttemptTimeout, delivery.DefaultAttemptTimeout),
		Now: cfg.Now, Logger: cfg.Logger,
	})
	gc := store.GroupCommit()
	s.Engine = delivery.New(delivery.Config{
		Queue:          s.Queue,
		Relay:          s.Relay,
		Slots:          slots,
		Client:         delivery.NewClient(transport),
		Policy:         cfg.Policy,
		AttemptTimeout: cfg.AttemptTimeout,
		Concurrency:    cfg.Concurrency,
		PerEndpoint:    cfg.PerEndpoint,
		PollInterval:   cfg.PollInterval,
		RecordWindow:   gc.RecordWindow,
		Processes:      gc.Processes,
		Lease:          cfg.Lease,
		ShutdownGrace:  cfg.ShutdownGrace,
		IsRefused:      func(err error) bool { return errors.Is(err, netguard.ErrAddressNotAllowed) },
		Now:            cfg.Now,
		Random:         cfg.Random,
		Logger:         cfg.Logger,
		Metrics:        s.Metrics,
		Tracing:        cfg.Tracing,
		Recorded:       cfg.Recorded,
		Looked:         cfg.Looked,
		Limiter:        limiter(store),
	})
	s.Registrar.SetEngine(s.Engine)
	cfg.PublicURL = cmp.Or(cfg.PublicURL, DefaultPublicURL)
	if u, err := url.Parse(cfg.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		s.Close()
		return nil, fmt.Errorf("public URL %q must be an http or https URL, such as https://hooks.example.com", cfg.PublicURL)
	}
	keys, err := joinCluster(ctx, store, &cfg, cluster != nil)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.cfg = cfg
	sessions := session.NewSigner(string(keys.PortalKey))
	s.App = app.New(app.Config{
		Store: store, Registrar: s.Registrar, URLs: guard, AllowHTTP: cfg.AllowHTTP,
		Sessions: sessions, PublicURL: cfg.PublicURL,
		Wake: s.announce, WakeOutbox: s.outbox.Kick,
		WakeErasure: s.erase.Kick, Erased: func() { s.scrubDue.Store(true) }, Drained: cfg.Drained,
		Registered: s.Metrics.EventRegistered, Now: cfg.Now, Logger: cfg.Logger,
		Policy: s.Engine.Policy(), Tracing: cfg.Tracing,
		Relay:       s.Relay,
		Maintenance: store, BacklogAlert: orDefault(cfg.BacklogAlert, webhooks.DefaultBacklogAlert),
		RecoveryProbe: orDefault(cfg.RecoveryProbe, webhooks.DefaultRecoveryProbe),
		RecoveryFor:   orDefault(cfg.RecoveryFor, webhooks.DefaultRecoveryFor),
	})
	s.App.UseKeys(keys)
	portalHandler, err := portal.New(portal.Config{
		App: s.App, Sessions: sessions, AllowHTTP: cfg.AllowHTTP, PublicURL: cfg.PublicURL, Policy: s.Engine.Policy(),
		RecoveryProbe: orDefault(cfg.RecoveryProbe, webhooks.DefaultRecoveryProbe), RecoveryFor: orDefault(cfg.RecoveryFor, webhooks.DefaultRecoveryFor),
		Now: cfg.Now, Logger: cfg.Logger,
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	api := &httpapi.Server{
		App:    s.App,
		Ping:   store.Ping,
		Now:    cfg.Now,
		Logger: cfg.Logger,
		Extra: map[string]http.Handler{
			"/portal/":     portalHandler,
			"GET /metrics": s.Metrics.Handler(),
		},
		Observe: s.Metrics.ObserveRequest,
		Tracing: cfg.Tracing,
	}
	s.Handler = api.Handler()
	return s, nil
}

// joinCluster checks the admin key against the database's (making one
// with NewAdminKey on a database that has none, when cfg has no key) and
// returns the keys the process serves with. cfg.AdminKey is set to the key
// in force. On a database several processes share, the first one says
// that the others need its key.
func joinCluster(ctx context.Context, store driver.Store, cfg *Config, shared bool) (*app.ClusterKeys, error) {
	if cfg.AdminKey == "" {
		has, err := app.HasClusterKeys(ctx, store)
		if err != nil {
			return nil, fmt.Errorf("reading the admin key: %w", err)
		}
		if has {
			return nil, app.ErrAdminKeyRequired
		}
		if cfg.AdminKey, err = cfg.NewAdminKey(); err != nil {
			return nil, err
		}
	}
	keys, outcome, err := app.JoinCluster(ctx, store, cfg.AdminKey, cfg.PreviousAdminKey, cfg.Now())
	if err != nil {
		if errors.Is(err, app.ErrAdminKeyMismatch) {
			return nil, err
		}
		return nil, fmt.Errorf("reading the admin key: %w", err)
	}
	switch {
	case outcome == app.KeysCreated && shared:
		cfg.Logger.Info("webhooks: this database's admin key is this process's: give every other process on it the same")
	case outcome == app.KeysRotated:
		cfg.Logger.Warn("webhooks: admin key rotated: the previous key stops working on every process, and every portal session ends")
	}
	return keys, nil
}

// DefaultPublicURL is the base of the links the service gives out unless
// configured.
const DefaultPublicURL = "http://localhost:8080"

// libpqKeywords are the keys a key=value PostgreSQL connection string
// starts with (libpq's, which pgx reads too).
var libpqKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true, "passfile": true,
	"connect_timeout": true, "sslmode": true, "sslcert": true, "sslkey": true, "sslrootcert": true, "sslpassword": true,
	"application_name": true, "options": true, "target_session_attrs": true, "service": true, "search_path": true,
}

// IsPostgres reports whether a database setting names PostgreSQL: a
// postgres:// or postgresql:// URL, or a key=value connection string such
// as "host=db.internal dbname=webhooks". Anything else is a SQLite file
// (a path that looks like such a string can say so with sqlite:).
func IsPostgres(database string) bool {
	if strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://") {
		return true
	}
	key, _, ok := strings.Cut(strings.TrimSpace(database), "=")
	return ok && libpqKeywords[strings.TrimSpace(key)]
}

// openBackend picks the backend from the database setting.
func openBackend(ctx context.Context, database string, logger *slog.Logger) (driver.Driver, error) {
	if IsPostgres(database) {
		return postgres.Open(ctx, database, postgres.WithLogger(logger))
	}
	path := strings.TrimPrefix(strings.TrimPrefix(database, "sqlite://"), "sqlite:")
	if path == "" {
		return nil, errors.New("database: a SQLite file path is required")
	}
	return sqlite.Open(ctx, path)
}

// Run serves HTTP on ln and runs the delivery engine and the background
// services until ctx ends, then shuts down gracefully: the server stops
// accepting and finishes its requests, the engine finishes or hands back
// its attempts, and the background services stop.
func (s *Service) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler: s.Handler,
		// Slow clients cannot hold connections: headers within 5 s, the
		// whole request within 30 s (bodies are at most 256 KiB).
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
	// The relay's connections last until the listener hangs up: the
	// shutdown ends them (the listeners reconnect, to another process).
	srv.RegisterOnShutdown(s.Relay.Shutdown)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	// Each role's goroutines carry a label that CPU profiles keep
	// (docs/performance.md), inherited by the goroutines they start.
	wg.Go(func() { pprof.Do(ctx, pprof.Labels("role", "engine"), func(ctx context.Context) { s.Engine.Run(ctx) }) })
	wg.Go(func() {
		pprof.Do(ctx, pprof.Labels("role", "background"), func(ctx context.Context) { maintenance.Run(ctx, s.background()...) })
	})
	errc := make(chan error, 1)
	go func() { pprof.Do(ctx, pprof.Labels("role", "api"), func(context.Context) { errc <- srv.Serve(ln) }) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	stop()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdownCtx); serr != nil && err == nil {
		err = serr
	}
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// refreshKeys follows a rotation of the admin key that another process on
// the database made.
func (s *Service) refreshKeys(ctx context.Context) error {
	changed, err := s.App.RefreshKeys(ctx)
	if changed {
		s.cfg.Logger.Warn("webhooks: another process rotated the admin key: this one now accepts only the new key; give it the new key before it restarts, or it will refuse to start")
	}
	return err
}

// Close stops the registrar and closes the store.
func (s *Service) Close() error {
	s.Registrar.Close()
	if s.slots != nil {
		s.slots.Close()
	}
	return s.Store.Close()
}

// disableAfter resolves Config.DisableAfter for the App, where zero never
// disables.
func disableAfter(d time.Duration) time.Duration {
	return orDefault(d, webhooks.DefaultDisableAfter)
}

// orDefault resolves a duration of the Config whose zero takes def and
// whose negative value means never, for the App, where zero is never.
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// limiter is the store's rate limiter when it has one shared by every
// process (PostgreSQL's), or nil: the engine's own, for a store only this
// process uses.
func limiter(store driver.Driver) delivery.Limiter {
	if l, ok := store.(delivery.Limiter); ok {
		return l
	}
	return nil
}
