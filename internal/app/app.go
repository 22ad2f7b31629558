// Package app holds the service's use cases: every action a caller can
// take, each written once. The JSON API (internal/httpapi) and the portal
// (internal/portal) decode their input, call an App method with their
// Caller, and render what it returns; neither talks to a store to change
// anything.
//
// Each method checks that the caller may act (tenant isolation, admin-only
// actions), validates its input with the domain's rules, runs the SSRF
// check on URLs, makes secrets and keys, records the action in the audit
// log (a refused one too), and wakes the delivery engine when it made work
// due. The stores keep transactions and SQL.
package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/session"
	"github.com/factuarea/webhooks/internal/tracing"
)

// URLChecker refuses endpoint URLs the service must not call: the SSRF
// guard's check at creation and update (netguard.Guard implements it).
type URLChecker interface {
	CheckURL(ctx context.Context, raw string, requireHTTPS bool) (*url.URL, error)
}

// Config configures an App.
type Config struct {
	Store Store
	// Registrar registers the producers' events (queue.Registrar).
	Registrar Registrar
	// URLs checks endpoint URLs when they are set. Nil checks nothing
	// (tests of other things only).
	URLs URLChecker
	// AllowHTTP lets live-mode endpoints use plain http.
	AllowHTTP bool
	// AdminKey is the platform's key; empty accepts no admin until
	// JoinCluster's keys are given to UseKeys.
	AdminKey string
	// Sessions signs portal links; PublicURL is the base of those links.
	Sessions  *session.Signer
	PublicURL string
	// Wake, if set, tells the delivery engines that deliveries are due
	// now (this process's, and the others' if it has no room for them).
	Wake func()
	// WakeOutbox, if set, tells what drains the outbox (DrainOutbox) that
	// a transaction stored entries in it; Drained, if set, is called after
	// DrainOutbox acted on entries (tests wait on it).
	WakeOutbox func()
	Drained    func()
	// WakeErasure, if set, tells what works through the erasure jobs
	// (EraseNext) that a deletion stored one; Erased, if set, is called
	// after a transaction that erased or deleted something, so that a
	// scrub makes the bytes leave the disk (driver.Maintenance.Scrub).
	WakeErasure func()
	Erased      func()
	// Registered, if set, is called for each event registered (metrics).
	Registered func()
	// Policy is the engine's retry schedule, which an outage rehearsal
	// compresses (SPEC 17).
	Policy webhooks.RetryPolicy
	// Maintenance reads what the backlog alert and the recovery probes
	// act on: the store's (nil: neither runs). BacklogAlert (0: never),
	// RecoveryProbe and RecoveryFor are SPEC 14's.
	Maintenance driver.Maintenance
	// Relay holds the listeners' connections of relay endpoints (SPEC
	// 20); nil: this service relays nothing.
	Relay         RelayHub
	BacklogAlert  time.Duration
	RecoveryProbe time.Duration
	RecoveryFor   time.Duration
	// Tracing makes a span of each registration (nil: tracing off).
	Tracing *tracing.Tracing
	Now     func() time.Time
	Logger  *slog.Logger
}

// App runs the use cases. Its methods are safe for concurrent use.
type App struct {
	cfg Config
	// adminHash is the hash of the admin key accepted now (nil: none), and
	// portalKey the cluster's portal key in use (nil: Sessions' own); both
	// change when another process rotates the admin key.
	adminHash atomic.Pointer[[32]byte]
	portalKey atomic.Pointer[[]byte]
	catalogs  catalogs // see catalog.go
}

// New returns an App.
func New(cfg Config) *App {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Wake == nil {
		cfg.Wake = func() {}
	}
	if cfg.Registered == nil {
		cfg.Registered = func() {}
	}
	if cfg.Drained == nil {
		cfg.Drained = func() {}
	}
	if cfg.WakeErasure == nil {
		cfg.WakeErasure = func() {}
	}
	if cfg.Erased == nil {
		cfg.Erased = func() {}
	}
	if cfg.WakeOutbox == nil {
		cfg.WakeOutbox = func() {}
	}
	a := &App{cfg: cfg}
	if cfg.AdminKey != "" {
		h := hashKey(cfg.AdminKey)
		a.adminHash.Store(&h)
	}
	return a
}

// Caller is who asks: the admin, an account's API key, or a portal
// session of one account.
type Caller struct {
	Actor webhooks.Actor
	// AccountID is the account an API key or a portal session belongs
	// to; empty for the admin, who may see every account.
	AccountID string
}

// Admin is the caller of the platform's admin key.
func Admin() Caller { return Caller{Actor: webhooks.Actor{Type: webhooks.ActorAdmin}} }

// PortalCaller is the caller of a portal session.
func PortalCaller(s session.Session) Caller {
	return Caller{Actor: webhooks.Actor{Type: webhooks.ActorPortal, ID: s.ID}, AccountID: s.AccountID}
}

// IsAdmin reports whether c is the admin.
func (c Caller) IsAdmin() bool { return c.Actor.Type == webhooks.ActorAdmin }

// canSee reports whether c may see what belongs to accountID.
func (c Caller) canSee(accountID string) bool { return c.IsAdmin() || c.AccountID == accountID }

// requireAdmin refuses every caller but the admin.
func (c Caller) requireAdmin() error {
	if !c.IsAdmin() {
		return webhooks.Errorf(webhooks.EFORBIDDEN, "This route needs the platform's admin key.")
	}
	return nil
}

// hashKey is how keys are compared and stored: keys are 32 random bytes,
// so a fast hash is enough (no brute force can walk that space).
func hashKey(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// Authenticate returns the caller of an API key: the admin key, compared in
// constant time, or an account's key, found by its hash (the key itself is
// never stored or compared).
func (a *App) Authenticate(ctx context.Context, key string) (Caller, error) {
	if key == "" {
		return Caller{}, webhooks.Errorf(webhooks.EUNAUTHORIZED, "Send your API key as Authorization: Bearer <key>.")
	}
	h := hashKey(key)
	if admin := a.adminHash.Load(); admin != nil && subtle.ConstantTimeCompare(h[:], admin[:]) == 1 {
		return Admin(), nil
	}
	k, err := a.cfg.Store.FindAPIKey(ctx, h[:])
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		return Caller{}, webhooks.Errorf(webhooks.EUNAUTHORIZED, "The API key is not valid (unknown or revoked).")
	} else if err != nil {
		return Caller{}, err
	}
	return Caller{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: k.ID}, AccountID: k.AccountID}, nil
}

// audit returns the audit entry of an action c took, and that succeeded,
// on a target of accountID's at now (refused marks a refusal's).
func (c Caller) audit(accountID, action, targetType, targetID string, now time.Time) *webhooks.AuditEntry {
	return &webhooks.AuditEntry{
		ID: webhooks.NewID(), AccountID: accountID, Actor: c.Actor, Action: action,
		TargetType: targetType, TargetID: targetID, Outcome: webhooks.AuditSucceeded, Created: now,
	}
}

// refused records a refused action in the audit log and returns err. Only
// a caller's own objects get here, so the log never names another tenant's
// ids; "not found" and internal errors are not refusals.
func (a *App) refused(ctx context.Context, c Caller, accountID, action, targetType, targetID string, err error) error {
	code := webhooks.ErrorCode(err)
	if code == webhooks.EINTERNAL || code == webhooks.ENOTFOUND || code == webhooks.EUNAVAILABLE {
		return err
	}
	e := c.audit(accountID, action, targetType, targetID, a.cfg.Now())
	e.Outcome, e.ErrorCode = webhooks.AuditRefused, code
	if aerr := a.record(ctx, e); aerr != nil {
		a.cfg.Logger.Error("audit: recording a refused action failed", "action", action, "err", aerr)
	}
	return err
}

// record stores an audit entry of an action that changed nothing else.
func (a *App) record(ctx context.Context, e *webhooks.AuditEntry) error {
	return a.cfg.Store.InTx(ctx, func(tx Tx) error { return tx.InsertAudit(ctx, e) })
}

// insertAudit stores e in tx. The audit log is each account's; changes to
// the platform's own endpoints, which belong to no account (e.AccountID
// ""), are in the platform's log (SPEC 8), which only the admin key reads
// (ListPlatformAudit).
func insertAudit(ctx context.Context, tx Tx, e *webhooks.AuditEntry) error {
	return tx.InsertAudit(ctx, e)
}
