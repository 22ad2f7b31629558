package receiver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/factuarea/webhooks/signature"
)

// DefaultMaxBodyBytes is the default limit on a delivery's body. Event
// bodies are a few kilobytes; the limit only bounds what an unauthenticated
// caller can make the receiver read before the signature is checked.
const DefaultMaxBodyBytes = 1 << 20

// HandleFunc processes one new event. It runs inside the transaction that
// records the event id, and must write its effect through tx (not through
// another connection) so that the effect and the id commit together. It runs
// at most once per event id, unless it fails: returning an error or
// panicking rolls back the transaction, the Handler answers 500, and the
// sender retries later.
//
// ctx is the request's context: it is cancelled when the sender gives up on
// the attempt (after its attempt timeout, 10 s by default), which rolls the
// transaction back. Answer well within that time; hand slow work to a queue
// written in tx.
type HandleFunc func(ctx context.Context, tx *sql.Tx, ev *Event) error

// Config configures a Handler. DB, Secrets and Handle are required.
type Config struct {
	// DB holds processed_webhook_events (see CreateTable) and the tables the
	// handler writes.
	DB *sql.DB
	// Secrets are the endpoint's signing secrets ("whsec_…"). During a
	// rotation, list the new and the old one: a delivery is accepted when
	// any signature matches any secret.
	Secrets []string
	// Scheme is the signature scheme to verify. The zero value, SchemeAny,
	// verifies Factuarea-Signature when the request carries it and the
	// Standard Webhooks headers otherwise. With SchemeStandard every secret
	// must be standard base64 after "whsec_" (secrets made since that
	// format are): New refuses any other, with an error that
	// errors.Is signature.ErrSecretNotStandard.
	Scheme Scheme
	// Handle processes each new event.
	Handle HandleFunc
	// Dialect is the SQL dialect of DB. Zero detects it from the driver (see
	// DetectDialect).
	Dialect Dialect
	// MaxBodyBytes limits the body; a larger one gets 413. Defaults to
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Now is the clock, for the signature's tolerance and received_at.
	// Defaults to time.Now.
	Now func() time.Time
	// Logger receives one record per refused or failed delivery: Warn for
	// 4xx answers, Error for 500 (with the handler's error, which the
	// response does not reveal). Defaults to slog.Default().
	Logger *slog.Logger
}

// Handler is the receiver recipe as an http.Handler: verify, parse, record
// the id and run the handler in one transaction, answer. Its methods are safe
// for concurrent use.
type Handler struct {
	db       *sql.DB
	secrets  []string
	scheme   Scheme
	handle   HandleFunc
	dialect  Dialect
	maxBytes int64
	now      func() time.Time
	log      *slog.Logger
}

// secretNotStandard is the message of a secret refused for SchemeStandard,
// {index} being its index in Config.Secrets: word for word the Node,
// Python and PHP kits' (signature/testdata/standard-secrets.json).
const secretNotStandard = "secrets[{index}] is not standard base64 after whsec_ (padding included), " +
	"so it cannot verify Standard Webhooks signatures: rotate the endpoint's secret, or verify Factuarea-Signature only (scheme factuarea)"

// secretNotStandardError refuses Config.Secrets[index] for SchemeStandard.
type secretNotStandardError struct{ index int }

func (e *secretNotStandardError) Error() string {
	return strings.Replace(secretNotStandard, "{index}", strconv.Itoa(e.index), 1)
}

func (e *secretNotStandardError) Unwrap() error { return signature.ErrSecretNotStandard }

// New returns a Handler for cfg, or an error naming the field that is
// missing or wrong.
func New(cfg Config) (*Handler, error) {
	if cfg.DB == nil {
		return nil, errors.New("receiver: Config.DB is required")
	}
	if cfg.Handle == nil {
		return nil, errors.New("receiver: Config.Handle is required")
	}
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("receiver: Config.Secrets needs at least one secret")
	}
	if slices.Contains(cfg.Secrets, "") {
		return nil, errors.New("receiver: Config.Secrets has an empty secret")
	}
	switch cfg.Scheme {
	case SchemeAny, SchemeFactuarea:
	case SchemeStandard:
		for i, s := range cfg.Secrets {
			if !signature.StandardCompatible(s) {
				return nil, &secretNotStandardError{index: i}
			}
		}
	default:
		return nil, fmt.Errorf("receiver: Config.Scheme %v is not a scheme", cfg.Scheme)
	}
	if cfg.MaxBodyBytes < 0 {
		return nil, errors.New("receiver: Config.MaxBodyBytes must not be negative")
	}
	d, err := cfg.Dialect.resolve(cfg.DB)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		db:       cfg.DB,
		secrets:  slices.Clone(cfg.Secrets),
		scheme:   cfg.Scheme,
		handle:   cfg.Handle,
		dialect:  d,
		maxBytes: cfg.MaxBodyBytes,
		now:      cfg.Now,
		log:      cfg.Logger,
	}
	if h.maxBytes == 0 {
		h.maxBytes = DefaultMaxBodyBytes
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	return h, nil
}

// Dialect returns the SQL dialect the Handler uses.
func (h *Handler) Dialect() Dialect { return h.dialect }

// CreateTable is CreateTable in the Handler's dialect.
func (h *Handler) CreateTable(ctx context.Context) error {
	return createTableIn(ctx, h.db, h.dialect)
}

// Purge is Purge in the Handler's dialect and by the Handler's clock.
func (h *Handler) Purge(ctx context.Context, olderThan time.Duration) (int64, error) {
	return purgeIn(ctx, h.db, h.dialect, h.now().Add(-olderThan))
}

// ServeHTTP answers a delivery: 405 for a method other than POST, 413 for a
// body over the limit, 401 when the signature does not verify, 400 when the
// body is not an event (or, with the Standard Webhooks headers, when
// webhook-id is not its id), 500 when the handler or the database fails (the
// sender retries), and 200 when the event was processed now or before.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, r, http.StatusMethodNotAllowed, nil, fmt.Errorf("receiver: method %s not allowed", r.Method))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			err = fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, h.maxBytes)
			h.refuse(w, r, http.StatusRequestEntityTooLarge, nil, err)
			return
		}
		h.refuse(w, r, http.StatusBadRequest, nil, fmt.Errorf("receiver: read body: %w", err))
		return
	}
	// The signature covers the raw bytes, so it is checked before anything
	// decodes them, and before anything from an unauthenticated caller
	// reaches the database.
	scheme, err := verifyRequest(h.scheme, r.Header, body, h.now(), h.secrets)
	if err != nil {
		h.refuse(w, r, http.StatusUnauthorized, nil, err)
		return
	}
	ev, err := ParseEvent(body)
	if err != nil {
		h.refuse(w, r, http.StatusBadRequest, nil, err)
		return
	}
	// The kit deduplicates on the body's id. A Standard Webhooks library
	// would on webhook-id; the sender makes them equal, and a delivery
	// where they differ is refused rather than deduplicated on one of two
	// keys.
	if id := r.Header.Get(signature.StandardIDHeader); scheme == SchemeStandard && id != ev.ID {
		h.refuse(w, r, http.StatusBadRequest, ev, fmt.Errorf("%w: %s %q is not the body's id %s", ErrInvalidEvent, signature.StandardIDHeader, id, ev.ID))
		return
	}
	ev.Headers = ReadHeaders(r.Header)
	processed, err := h.Process(r.Context(), ev)
	if err != nil {
		h.refuse(w, r, http.StatusInternalServerError, ev, err)
		return
	}
	msg := "processed"
	if !processed {
		msg = "already processed"
	}
	h.log.LogAttrs(r.Context(), slog.LevelDebug, "webhook "+msg,
		slog.String("event_id", ev.ID), slog.String("delivery_id", ev.Headers.DeliveryID))
	reply(w, http.StatusOK, msg)
}

// Process runs the transactional step of the recipe for an event that is
// already verified and parsed, for callers that read requests their own way:
// in one transaction it records ev.ID and, if the id is new, runs the
// handler; then it commits. It reports whether the handler ran. A repeat
// returns false and a nil error. An error means nothing was committed: the
// event should be refused with a retryable status (500).
func (h *Handler) Process(ctx context.Context, ev *Event) (bool, error) {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("receiver: begin: %w", err)
	}
	// After Commit this does nothing; on every other path it undoes the
	// insert of the id, so that the sender's retry runs the handler again.
	defer tx.Rollback()
	isNew, err := record(ctx, tx, h.dialect, ev.ID, h.now())
	if err != nil {
		return false, err
	}
	if isNew {
		if err := h.call(ctx, tx, ev); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("receiver: commit: %w", err)
	}
	return isNew, nil
}

// call runs the handler, turning a panic into a *PanicError so that the
// transaction is rolled back and the sender gets a 500, not a dropped
// connection.
func (h *Handler) call(ctx context.Context, tx *sql.Tx, ev *Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	if err := h.handle(ctx, tx, ev); err != nil {
		return fmt.Errorf("receiver: handler: %w", err)
	}
	return nil
}

// PanicError is the error of a HandleFunc that panicked; it matches
// ErrHandlerPanicked with errors.Is.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("receiver: handler panicked: %v", e.Value)
}

// Is reports whether target is ErrHandlerPanicked.
func (e *PanicError) Is(target error) bool { return target == ErrHandlerPanicked }

// refuse logs err and answers status. A 4xx answer carries the error's text,
// which the sender keeps on the attempt where the customer can read why the
// delivery was refused; a 500 says nothing of the handler's error.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, ev *Event, err error) {
	level, msg := slog.LevelWarn, err.Error()
	if status >= 500 {
		level, msg = slog.LevelError, "internal error"
	}
	attrs := []slog.Attr{slog.Int("status", status), slog.String("err", err.Error())}
	if ev != nil {
		attrs = append(attrs, slog.String("event_id", ev.ID), slog.String("delivery_id", ev.Headers.DeliveryID))
	}
	if pe, ok := errors.AsType[*PanicError](err); ok {
		attrs = append(attrs, slog.String("stack", string(pe.Stack)))
	}
	h.log.LogAttrs(r.Context(), level, "webhook refused", attrs...)
	reply(w, status, msg)
}

// reply writes a one-line plain text answer.
func reply(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}
