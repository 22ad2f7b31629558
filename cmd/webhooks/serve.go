package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/build"
	"github.com/factuarea/webhooks/internal/delivery"
	"github.com/factuarea/webhooks/internal/netguard"
	"github.com/factuarea/webhooks/internal/service"
	"github.com/factuarea/webhooks/internal/tracing"
)

// ServeCommand is `webhooks serve`: the API, the portal and the delivery
// workers in one process.
type ServeCommand struct {
	Out    io.Writer // where the first start prints the new admin key
	Stderr io.Writer // logs
	Getenv func(string) string

	// Listening, if set, receives the bound address once the service
	// accepts connections (tests serve on ":0").
	Listening func(addr string)
	// LimitMemory applies -memory-limit to the process: the command does,
	// tests that run several services in one process do not.
	LimitMemory bool
}

// serveFlags holds the settings, each a flag whose default comes from its
// WEBHOOKS_* variable.
type serveFlags struct {
	addr, database, dataDir, adminKey, retrySchedule, allowNetworks, logLevel, logFormat string
	publicURL, previousAdminKey, memoryLimit                                             string
	keySource, generated                                                                 string // where the admin key came from; one made at this start
	retryJitter                                                                          float64
	attemptTimeout, retention, pollInterval, shutdownGrace, lease, disableAfter          time.Duration
	outboxInterval, purgeInterval, keysRefresh, eraseInterval, scrubInterval             time.Duration
	backlogAlert, recoveryProbe, recoveryFor                                             time.Duration
	allowHTTP                                                                            bool
	concurrency, perEndpoint                                                             int
}

// Run parses args and serves until ctx ends (SIGINT or SIGTERM).
func (c *ServeCommand) Run(ctx context.Context, args []string) error {
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	f, err := c.parse(args)
	if err != nil {
		return err
	}
	logger, err := newLogger(c.Stderr, f.logLevel, f.logFormat)
	if err != nil {
		return err
	}
	cfg, err := c.config(f, logger)
	if err != nil {
		return err
	}
	if c.LimitMemory {
		limit, _ := parseBytes(f.memoryLimit) // checked by parse
		limitMemory(ctx, limit, logger)
	}
	// OTEL_* come from the process's environment, where the SDK reads
	// them too.
	if cfg.Tracing, err = tracing.FromEnv(ctx, logger); err != nil {
		return err
	}
	defer shutdownTracing(cfg.Tracing, logger)
	// Listening first: a taken address fails before the database is
	// touched, and the public URL can default to the port bound.
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if cfg.PublicURL == "" {
		cfg.PublicURL = defaultPublicURL(f.addr, ln.Addr())
	}
	svc, err := service.Open(ctx, cfg)
	if f.generated != "" && err != nil {
		// Another process set up the database at the same moment: this
		// key is nobody's.
		os.Remove(c.adminKeyPath(f))
	}
	if err != nil {
		return keyError(err, f.keySource, f.dataDir, cfg.PreviousAdminKey != "")
	}
	defer svc.Close()
	if f.generated != "" && c.Out != nil {
		fmt.Fprintf(c.Out, "Created the admin key (shown once; kept in %s, mode 0600):\n\n    %s\n\n", c.adminKeyPath(f), f.generated)
	}
	logger.Info("webhooks: serving", startupAttrs(ln.Addr().String(), cfg, f.allowNetworks)...)
	if c.Listening != nil {
		c.Listening(ln.Addr().String())
	}
	err = svc.Run(ctx, ln)
	logger.Info("webhooks: stopped")
	return err
}

func (c *ServeCommand) parse(args []string) (*serveFlags, error) {
	env := func(name, def string) string {
		if v := c.Getenv("WEBHOOKS_" + name); v != "" {
			return v
		}
		return def
	}
	var problems []string
	durationEnv := func(name string, def time.Duration) time.Duration {
		v := env(name, "")
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("WEBHOOKS_%s=%q is not a duration (such as 10s or 2h)", name, v))
		}
		return d
	}
	intEnv := func(name string, def int) int {
		v := env(name, "")
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("WEBHOOKS_%s=%q is not a number", name, v))
		}
		return n
	}
	boolEnv := func(name string) bool {
		v := env(name, "false")
		b, err := strconv.ParseBool(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("WEBHOOKS_%s=%q is not true or false", name, v))
		}
		return b
	}
	floatEnv := func(name string, def float64) float64 {
		v := env(name, "")
		if v == "" {
			return def
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("WEBHOOKS_%s=%q is not a number", name, v))
		}
		return n
	}

	f := &serveFlags{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.StringVar(&f.addr, "addr", env("ADDR", defaultAddr), "address to listen on (WEBHOOKS_ADDR)")
	fs.StringVar(&f.publicURL, "public-url", env("PUBLIC_URL", ""), "base URL of the links the service gives out, such as portal sessions; default http://localhost:<port of -addr>, or its host if it names one (WEBHOOKS_PUBLIC_URL)")
	fs.StringVar(&f.dataDir, "data", env("DATA", "data"), "data folder: the SQLite file and the generated admin key (WEBHOOKS_DATA)")
	// The database URL (it may hold a password) and the admin key are not
	// flag defaults, which -h and a bad flag print: the environment fills
	// them after parsing.
	fs.StringVar(&f.database, "database", "", "SQLite file path or sqlite: URL, or a postgres:// URL or key=value connection string; default <data>/webhooks.db (WEBHOOKS_DATABASE)")
	fs.StringVar(&f.adminKey, "admin-key", "", "the platform's admin key, the same for every process on one database; default: <data>/admin.key, generated by the database's first start (WEBHOOKS_ADMIN_KEY)")
	fs.StringVar(&f.previousAdminKey, "previous-admin-key", "", "to rotate the admin key: the key in use now, which -admin-key replaces on every process (WEBHOOKS_PREVIOUS_ADMIN_KEY)")
	fs.StringVar(&f.retrySchedule, "retry-schedule", env("RETRY_SCHEDULE", formatSchedule(webhooks.DefaultRetryWaits)), "waits after each failed attempt, or none for a single attempt (WEBHOOKS_RETRY_SCHEDULE)")
	fs.Float64Var(&f.retryJitter, "retry-jitter", floatEnv("RETRY_JITTER", webhooks.DefaultRetryJitter), "fraction each wait varies either way (WEBHOOKS_RETRY_JITTER)")
	fs.DurationVar(&f.attemptTimeout, "attempt-timeout", durationEnv("ATTEMPT_TIMEOUT", delivery.DefaultAttemptTimeout), "time an endpoint has to answer (WEBHOOKS_ATTEMPT_TIMEOUT)")
	fs.StringVar(&f.allowNetworks, "allow-networks", env("ALLOW_NETWORKS", ""), "comma-separated CIDRs exempt from the SSRF guard (WEBHOOKS_ALLOW_NETWORKS)")
	fs.BoolVar(&f.allowHTTP, "allow-http", boolEnv("ALLOW_HTTP"), "let live-mode endpoints use plain http (WEBHOOKS_ALLOW_HTTP)")
	fs.DurationVar(&f.disableAfter, "disable-after", durationEnv("DISABLE_AFTER", webhooks.DefaultDisableAfter), "disable an endpoint whose every attempt has failed this long; 0 never (WEBHOOKS_DISABLE_AFTER)")
	fs.DurationVar(&f.backlogAlert, "backlog-alert", durationEnv("BACKLOG_ALERT", webhooks.DefaultBacklogAlert), "announce webhook_endpoint.backlogged when an endpoint's oldest due delivery has waited this long; 0 never (WEBHOOKS_BACKLOG_ALERT)")
	fs.DurationVar(&f.recoveryProbe, "recovery-probe", durationEnv("RECOVERY_PROBE", webhooks.DefaultRecoveryProbe), "how often an endpoint disabled for failing, with auto_recover, is sent a ping to see if it is back (WEBHOOKS_RECOVERY_PROBE)")
	fs.DurationVar(&f.recoveryFor, "recovery-for", durationEnv("RECOVERY_FOR", webhooks.DefaultRecoveryFor), "how long after its disable such an endpoint is probed (WEBHOOKS_RECOVERY_FOR)")
	fs.DurationVar(&f.retention, "retention", durationEnv("RETENTION", service.DefaultRetention), "how long events, deliveries and attempts are kept (WEBHOOKS_RETENTION)")
	fs.IntVar(&f.concurrency, "concurrency", intEnv("CONCURRENCY", delivery.DefaultConcurrency), "attempts in flight in this process (WEBHOOKS_CONCURRENCY)")
	fs.IntVar(&f.perEndpoint, "endpoint-concurrency", intEnv("ENDPOINT_CONCURRENCY", delivery.DefaultPerEndpoint), "attempts in flight to one endpoint, across all processes (WEBHOOKS_ENDPOINT_CONCURRENCY)")
	fs.DurationVar(&f.lease, "lease", durationEnv("LEASE", 0), "how long a claim lasts before another process may take the delivery over; default attempt timeout + 30s (WEBHOOKS_LEASE)")
	fs.DurationVar(&f.pollInterval, "poll-interval", durationEnv("POLL_INTERVAL", delivery.DefaultPollInterval), "safety-net poll for due deliveries (WEBHOOKS_POLL_INTERVAL)")
	fs.DurationVar(&f.eraseInterval, "erase-interval", durationEnv("ERASE_INTERVAL", service.DefaultEraseInterval), "how often erasure jobs of deleted companies and accounts are looked for unasked, beside the run each deletion asks for (WEBHOOKS_ERASE_INTERVAL)")
	fs.DurationVar(&f.scrubInterval, "scrub-interval", durationEnv("SCRUB_INTERVAL", service.DefaultScrubInterval), "how often, after erasures or purges, the erased bytes are made to leave the disk: a WAL checkpoint on SQLite, a vacuum on PostgreSQL (WEBHOOKS_SCRUB_INTERVAL)")
	fs.DurationVar(&f.outboxInterval, "outbox-interval", durationEnv("OUTBOX_INTERVAL", service.DefaultOutboxInterval), "how often the outbox of operational events is drained unasked, beside the drains each commit asks for (WEBHOOKS_OUTBOX_INTERVAL)")
	fs.DurationVar(&f.purgeInterval, "purge-interval", durationEnv("PURGE_INTERVAL", service.DefaultPurgeInterval), "how often what is older than the retention is purged (WEBHOOKS_PURGE_INTERVAL)")
	fs.DurationVar(&f.keysRefresh, "keys-refresh", durationEnv("KEYS_REFRESH", service.DefaultKeysRefresh), "with PostgreSQL: how often the admin key is read again, to follow a rotation made by another process (WEBHOOKS_KEYS_REFRESH)")
	fs.DurationVar(&f.shutdownGrace, "shutdown-grace", durationEnv("SHUTDOWN_GRACE", 0), "time in-flight attempts get to finish at shutdown; default attempt timeout + 1s (WEBHOOKS_SHUTDOWN_GRACE)")
	fs.StringVar(&f.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (WEBHOOKS_LOG_LEVEL)")
	fs.StringVar(&f.logFormat, "log-format", env("LOG_FORMAT", "text"), "text or json (WEBHOOKS_LOG_FORMAT)")
	fs.StringVar(&f.memoryLimit, "memory-limit", env("MEMORY_LIMIT", strconv.Itoa(defaultMemoryLimit>>20)+"MiB"), "soft limit on the Go runtime's memory, such as 32MiB or 1GiB, kept at least twice the live heap; off for none; GOMEMLIMIT, if set, wins (WEBHOOKS_MEMORY_LIMIT)")
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.database = cmp.Or(f.database, env("DATABASE", ""))
	f.adminKey = cmp.Or(f.adminKey, env("ADMIN_KEY", ""))
	f.previousAdminKey = cmp.Or(f.previousAdminKey, env("PREVIOUS_ADMIN_KEY", ""))
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	if _, err := parseBytes(f.memoryLimit); err != nil {
		return nil, fmt.Errorf("memory-limit: %w", err)
	}
	return f, nil
}

// config turns the settings into the service's configuration.
func (c *ServeCommand) config(f *serveFlags, logger *slog.Logger) (service.Config, error) {
	cfg := service.Config{
		Database:       f.database,
		AttemptTimeout: f.attemptTimeout,
		AllowHTTP:      f.allowHTTP,
		PublicURL:      f.publicURL,
		Concurrency:    f.concurrency,
		PerEndpoint:    f.perEndpoint,
		PollInterval:   f.pollInterval,
		OutboxInterval: f.outboxInterval,
		EraseInterval:  f.eraseInterval,
		ScrubInterval:  f.scrubInterval,
		PurgeInterval:  f.purgeInterval,
		KeysRefresh:    f.keysRefresh,
		Retention:      f.retention,
		DisableAfter:   f.disableAfter,
		BacklogAlert:   f.backlogAlert,
		RecoveryProbe:  f.recoveryProbe,
		RecoveryFor:    f.recoveryFor,
		Lease:          f.lease,
		ShutdownGrace:  f.shutdownGrace,
		Logger:         logger,
	}
	if cfg.Database == "" {
		cfg.Database = filepath.Join(f.dataDir, "webhooks.db")
	}
	waits, err := parseSchedule(f.retrySchedule)
	if err != nil {
		return cfg, err
	}
	cfg.Policy = webhooks.RetryPolicy{Waits: waits, Jitter: f.retryJitter}
	if err := cfg.Policy.Validate(); err != nil {
		return cfg, err
	}
	if f.attemptTimeout <= 0 {
		return cfg, errors.New("attempt timeout must be positive")
	}
	switch {
	case f.disableAfter < 0:
		return cfg, errors.New("disable-after must be 0 (never) or a positive duration such as 120h")
	case f.disableAfter == 0:
		cfg.DisableAfter = -1 // never
	}
	switch {
	case f.backlogAlert < 0:
		return cfg, errors.New("backlog-alert must be 0 (never) or a positive duration such as 5m")
	case f.backlogAlert == 0:
		cfg.BacklogAlert = -1 // never
	}
	if f.recoveryProbe <= 0 || f.recoveryFor <= 0 {
		return cfg, errors.New("recovery-probe and recovery-for must be positive durations, such as 1h and 168h")
	}
	if f.retention < 24*time.Hour {
		return cfg, fmt.Errorf("retention %s is too short: keep at least a day (the default is %s)", f.retention, service.DefaultRetention)
	}
	if f.outboxInterval <= 0 || f.purgeInterval <= 0 || f.keysRefresh <= 0 || f.eraseInterval <= 0 || f.scrubInterval <= 0 {
		return cfg, errors.New("the outbox, purge, erase and scrub intervals and the keys refresh must be positive durations")
	}
	if f.concurrency < 1 || f.perEndpoint < 1 {
		return cfg, errors.New("concurrency and endpoint concurrency must be at least 1")
	}
	if cfg.AllowNetworks, err = netguard.ParseNetworks(f.allowNetworks); err != nil {
		return cfg, fmt.Errorf("allow networks: %w", err)
	}
	if cfg.AdminKey, f.keySource, err = c.adminKey(f); err != nil {
		return cfg, err
	}
	cfg.PreviousAdminKey = f.previousAdminKey
	if cfg.AdminKey == "" {
		cfg.NewAdminKey = func() (string, error) {
			key, err := c.newAdminKey(f)
			f.generated = key
			return key, err
		}
	}
	return cfg, nil
}

// defaultAddr is where serve listens unless told.
const defaultAddr = ":8080"

// defaultPublicURL is the base of the links a service listening on addr
// (bound at bound) gives out: plain http on the port it listens on, at the
// host addr names, or localhost when it names none or every interface.
// Behind a proxy or on another host, set the public URL.
func defaultPublicURL(addr string, bound net.Addr) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = "", ""
	}
	if tcp, ok := bound.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	// url.URL escapes an IPv6 zone's % (fe80::1%2 is [fe80::1%252]), which
	// a URL must, or the service refuses its own public URL.
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}).String()
}

// startupAttrs are the attributes of the start-up log line: where the
// service listens and is reached, its store, its version, and every
// security setting relaxed from the default.
func startupAttrs(addr string, cfg service.Config, allowNetworks string) []any {
	store := "sqlite"
	if service.IsPostgres(cfg.Database) {
		store = "postgres"
	}
	attrs := []any{"addr", addr, "public_url", cfg.PublicURL, "store", store, "database", redactDSN(cfg.Database), "version", build.Version()}
	if cfg.AllowHTTP {
		attrs = append(attrs, "allow_http", true)
	}
	if len(cfg.AllowNetworks) > 0 {
		attrs = append(attrs, "allow_networks", allowNetworks)
	}
	if cfg.Tracing.Enabled() {
		attrs = append(attrs, "tracing", "otlp")
	}
	return attrs
}

// shutdownTracing exports the spans not exported yet, the last attempts'
// among them, once the service stopped.
func shutdownTracing(t *tracing.Tracing, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		logger.Warn("tracing: exporting the last spans failed", "err", err)
	}
}

// parseSchedule reads a comma list of Go durations, or "none": no retry,
// a single attempt. An empty list is an error, not the default in
// disguise.
func parseSchedule(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "none" {
		return []time.Duration{}, nil
	}
	waits := []time.Duration{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			if part == "" {
				return nil, fmt.Errorf("retry schedule %q has an empty wait: list durations such as 1m,5m,30m, or say none for a single attempt", s)
			}
			return nil, fmt.Errorf("retry schedule: %q is not a positive duration (such as 1m or 2h)", part)
		}
		waits = append(waits, d)
	}
	return waits, nil
}

// formatSchedule writes waits as the retry schedule's setting.
func formatSchedule(waits []time.Duration) string {
	parts := make([]string, len(waits))
	for i, w := range waits {
		p := w.String() // "2h0m0s": without the zero units
		if strings.HasSuffix(p, "m0s") {
			p = strings.TrimSuffix(p, "0s")
		}
		if strings.HasSuffix(p, "h0m") {
			p = strings.TrimSuffix(p, "0m")
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}

// adminKey returns the configured admin key, or the one kept in the data
// folder, and says where it came from; with neither, it is empty.
func (c *ServeCommand) adminKey(f *serveFlags) (key, source string, err error) {
	if f.adminKey != "" {
		return f.adminKey, "the admin key given (-admin-key or WEBHOOKS_ADMIN_KEY)", nil
	}
	path := c.adminKeyPath(f)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil
	} else if err != nil {
		return "", "", err
	}
	key = strings.TrimSpace(string(b))
	if key == "" {
		return "", "", fmt.Errorf("%s is empty: delete it to generate a new admin key", path)
	}
	return key, "the admin key in " + path, nil
}

func (c *ServeCommand) adminKeyPath(f *serveFlags) string {
	return filepath.Join(f.dataDir, "admin.key")
}

// newAdminKey generates an admin key into the data folder (mode 0600), for
// a database that has none yet.
func (c *ServeCommand) newAdminKey(f *serveFlags) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	key := "fadmin_" + base64.RawURLEncoding.EncodeToString(raw[:])
	if err := os.MkdirAll(f.dataDir, 0o700); err != nil {
		return "", err
	}
	// O_EXCL: two first starts at once must not write two different keys.
	path := c.adminKeyPath(f)
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := file.WriteString(key + "\n"); err != nil {
		file.Close()
		return "", err
	}
	if err := file.Close(); err != nil {
		return "", err
	}
	return key, nil
}

// keyError says what to do when the database refused this process's admin
// key, or wants one it was not given.
func keyError(err error, source, dataDir string, previous bool) error {
	const fix = "every process on one database must have the same admin key: give this one the key the others use " +
		"(the first process printed it, and keeps it in its data folder's admin.key unless WEBHOOKS_ADMIN_KEY set it)"
	switch {
	case errors.Is(err, app.ErrAdminKeyRequired):
		return fmt.Errorf("this database already has an admin key, and this process has none (no -admin-key, WEBHOOKS_ADMIN_KEY or %s): %s, in WEBHOOKS_ADMIN_KEY",
			filepath.Join(dataDir, "admin.key"), fix)
	case errors.Is(err, app.ErrAdminKeyMismatch) && previous:
		return fmt.Errorf("%s is not this database's admin key, and neither is the previous key (-previous-admin-key or WEBHOOKS_PREVIOUS_ADMIN_KEY): "+
			"to rotate the key, give the one in use now as the previous key", source)
	case errors.Is(err, app.ErrAdminKeyMismatch):
		return fmt.Errorf("%s is not this database's admin key: %s; or, to change the key of every process, "+
			"start one with the new key and WEBHOOKS_PREVIOUS_ADMIN_KEY set to the key in use now", source, fix)
	}
	return err
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: use text or json", format)
}

// keyValuePassword is the password of a key=value connection string.
var keyValuePassword = regexp.MustCompile(`(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redactDSN hides a password in a database URL or connection string before
// it is logged.
func redactDSN(dsn string) string {
	if service.IsPostgres(dsn) && !strings.Contains(dsn, "://") {
		return keyValuePassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon] + ":xxxxx" + dsn[at:]
			}
		}
	}
	return dsn
}
