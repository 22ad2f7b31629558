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
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/delivery"
	"github.com/factuarea/webhooks/internal/netguard"
	"github.com/factuarea/webhooks/internal/service"
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
}

// serveFlags holds the settings, each a flag whose default comes from its
// WEBHOOKS_* variable.
type serveFlags struct {
	addr, database, dataDir, adminKey, retrySchedule, allowNetworks, logLevel, logFormat string
	publicURL                                                                            string
	retryJitter                                                                          float64
	attemptTimeout, retention, pollInterval, shutdownGrace, lease, disableAfter          time.Duration
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
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	logger.Info("webhooks: serving", "addr", ln.Addr().String(), "database", redactDSN(cfg.Database), "version", webhooks.Version)
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
	fs.StringVar(&f.publicURL, "public-url", env("PUBLIC_URL", service.DefaultPublicURL), "base URL of the links the service gives out, such as portal sessions (WEBHOOKS_PUBLIC_URL)")
	fs.StringVar(&f.dataDir, "data", env("DATA", "data"), "data folder: the SQLite file and the generated admin key (WEBHOOKS_DATA)")
	// The database URL (it may hold a password) and the admin key are not
	// flag defaults, which -h and a bad flag print: the environment fills
	// them after parsing.
	fs.StringVar(&f.database, "database", "", "SQLite file path or sqlite: URL, or a postgres:// URL or key=value connection string; default <data>/webhooks.db (WEBHOOKS_DATABASE)")
	fs.StringVar(&f.adminKey, "admin-key", "", "the platform's admin key; default: generated at first start into <data>/admin.key (WEBHOOKS_ADMIN_KEY)")
	fs.StringVar(&f.retrySchedule, "retry-schedule", env("RETRY_SCHEDULE", formatSchedule(webhooks.DefaultRetryWaits)), "waits after each failed attempt, or none for a single attempt (WEBHOOKS_RETRY_SCHEDULE)")
	fs.Float64Var(&f.retryJitter, "retry-jitter", floatEnv("RETRY_JITTER", webhooks.DefaultRetryJitter), "fraction each wait varies either way (WEBHOOKS_RETRY_JITTER)")
	fs.DurationVar(&f.attemptTimeout, "attempt-timeout", durationEnv("ATTEMPT_TIMEOUT", delivery.DefaultAttemptTimeout), "time an endpoint has to answer (WEBHOOKS_ATTEMPT_TIMEOUT)")
	fs.StringVar(&f.allowNetworks, "allow-networks", env("ALLOW_NETWORKS", ""), "comma-separated CIDRs exempt from the SSRF guard (WEBHOOKS_ALLOW_NETWORKS)")
	fs.BoolVar(&f.allowHTTP, "allow-http", boolEnv("ALLOW_HTTP"), "let live-mode endpoints use plain http (WEBHOOKS_ALLOW_HTTP)")
	fs.DurationVar(&f.disableAfter, "disable-after", durationEnv("DISABLE_AFTER", webhooks.DefaultDisableAfter), "disable an endpoint whose every attempt has failed this long; 0 never (WEBHOOKS_DISABLE_AFTER)")
	fs.DurationVar(&f.retention, "retention", durationEnv("RETENTION", service.DefaultRetention), "how long events, deliveries and attempts are kept (WEBHOOKS_RETENTION)")
	fs.IntVar(&f.concurrency, "concurrency", intEnv("CONCURRENCY", delivery.DefaultConcurrency), "attempts in flight in this process (WEBHOOKS_CONCURRENCY)")
	fs.IntVar(&f.perEndpoint, "endpoint-concurrency", intEnv("ENDPOINT_CONCURRENCY", delivery.DefaultPerEndpoint), "attempts in flight to one endpoint, across all processes (WEBHOOKS_ENDPOINT_CONCURRENCY)")
	fs.DurationVar(&f.lease, "lease", durationEnv("LEASE", 0), "how long a claim lasts before another process may take the delivery over; default attempt timeout + 30s (WEBHOOKS_LEASE)")
	fs.DurationVar(&f.pollInterval, "poll-interval", durationEnv("POLL_INTERVAL", delivery.DefaultPollInterval), "safety-net poll for due deliveries (WEBHOOKS_POLL_INTERVAL)")
	fs.DurationVar(&f.shutdownGrace, "shutdown-grace", durationEnv("SHUTDOWN_GRACE", 0), "time in-flight attempts get to finish at shutdown; default attempt timeout + 1s (WEBHOOKS_SHUTDOWN_GRACE)")
	fs.StringVar(&f.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (WEBHOOKS_LOG_LEVEL)")
	fs.StringVar(&f.logFormat, "log-format", env("LOG_FORMAT", "text"), "text or json (WEBHOOKS_LOG_FORMAT)")
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.database = cmp.Or(f.database, env("DATABASE", ""))
	f.adminKey = cmp.Or(f.adminKey, env("ADMIN_KEY", ""))
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
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
		Retention:      f.retention,
		DisableAfter:   f.disableAfter,
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
	if f.retention < 24*time.Hour {
		return cfg, fmt.Errorf("retention %s is too short: keep at least a day (the default is %s)", f.retention, service.DefaultRetention)
	}
	if f.concurrency < 1 || f.perEndpoint < 1 {
		return cfg, errors.New("concurrency and endpoint concurrency must be at least 1")
	}
	if cfg.AllowNetworks, err = netguard.ParseNetworks(f.allowNetworks); err != nil {
		return cfg, fmt.Errorf("allow networks: %w", err)
	}
	if cfg.AdminKey, err = c.adminKey(f, logger); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// defaultAddr is where serve listens unless told.
const defaultAddr = ":8080"

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
// folder, creating it (mode 0600) and printing it once on the first start.
func (c *ServeCommand) adminKey(f *serveFlags, logger *slog.Logger) (string, error) {
	if f.adminKey != "" {
		return f.adminKey, nil
	}
	path := filepath.Join(f.dataDir, "admin.key")
	b, err := os.ReadFile(path)
	if err == nil {
		key := strings.TrimSpace(string(b))
		if key == "" {
			return "", fmt.Errorf("%s is empty: delete it to generate a new admin key", path)
		}
		logger.Info("webhooks: admin key read from the data folder", "path", path)
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	key := "fadmin_" + base64.RawURLEncoding.EncodeToString(raw[:])
	if err := os.MkdirAll(f.dataDir, 0o700); err != nil {
		return "", err
	}
	// O_EXCL: two first starts at once must not print two different keys.
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
	if c.Out != nil {
		fmt.Fprintf(c.Out, "Created the admin key (shown once; kept in %s, mode 0600):\n\n    %s\n\n", path, key)
	}
	return key, nil
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
