// Package portal is the customer portal of SPEC section 11: the
// integrations page an account opens through a one-hour link, showing its
// endpoints, their deliveries with every attempt, the events log, and the
// actions on endpoints (create, edit, enable, disable, delete, rotate and
// reveal the secret, send a test event, retry, replay, recover).
//
// Pages are rendered on the server with html/template; templates and CSS
// are embedded, so the portal works offline and without JavaScript. Every
// state change is a POST carrying a CSRF token bound to the session; its
// handler decodes the form and calls the use case in internal/app with the
// session as the caller, which audits it with actor "portal".
package portal

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/session"
)

// Config configures the portal.
type Config struct {
	App      *app.App
	Sessions *session.Signer
	// AllowHTTP says live-mode endpoints may use plain http (the form
	// says whether https is required).
	AllowHTTP bool
	// PublicURL is the service's public base URL; when it is https the
	// session cookie is Secure.
	PublicURL string
	// Policy is the retry schedule the service runs, which the pages
	// describe (zero: the spec's).
	Policy webhooks.RetryPolicy
	// RecoveryProbe and RecoveryFor are the automatic recovery's probes
	// (SPEC 14), which the pages describe (zero: the defaults).
	RecoveryProbe, RecoveryFor time.Duration
	Now                        func() time.Time
	Logger                     *slog.Logger
}

// Handler serves the portal under /portal/.
type Handler struct {
	cfg    Config
	words  words
	mux    *http.ServeMux
	pages  map[string]*pageTemplate
	css    string // the stylesheet's path, with its content hash
	secure bool
	cop    *http.CrossOriginProtection
}

// cookieName is the session cookie's name.
const cookieName = "portal_session"

// csrfField is the name of the hidden input every portal form carries.
const csrfField = "csrf"

// maxFormBytes bounds a form's body.
const maxFormBytes = 64 << 10

// New parses every page's templates (failing on the first error, so a
// broken template stops the service at startup) and returns the portal.
func New(cfg Config) (*Handler, error) {
	if cfg.App == nil || cfg.Sessions == nil {
		return nil, errors.New("portal: App and Sessions are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Policy.Waits == nil {
		cfg.Policy = webhooks.DefaultRetryPolicy()
	}
	cfg.RecoveryProbe = cmp.Or(cfg.RecoveryProbe, webhooks.DefaultRecoveryProbe)
	cfg.RecoveryFor = cmp.Or(cfg.RecoveryFor, webhooks.DefaultRecoveryFor)
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), secure: strings.HasPrefix(strings.ToLower(cfg.PublicURL), "https://")}
	h.words = policyWords(cfg.Policy)
	h.words.Probe, h.words.ProbeFor = span(cfg.RecoveryProbe), span(cfg.RecoveryFor)
	var err error
	if h.pages, err = parsePages(); err != nil {
		return nil, err
	}
	css, err := fs.ReadFile(staticFS, "static/portal.css")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(css)
	h.css = "/portal/static/portal.css?v=" + hex.EncodeToString(sum[:6])

	// Cross-origin protection (Sec-Fetch-Site / Origin) in front of the
	// CSRF token: a cross-site POST is refused before it reaches a form.
	h.cop = http.NewCrossOriginProtection()
	h.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, nil, http.StatusForbidden)
	}))
	h.routes()
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	h.cop.Handler(h.mux).ServeHTTP(w, r)
}

func (h *Handler) routes() {
	h.mux.HandleFunc("GET /portal/sessions/{token}", h.handleOpen)
	h.mux.HandleFunc("GET /portal/static/portal.css", h.handleCSS)

	h.page("GET /portal/{$}", h.handleEndpoints)
	h.page("GET /portal/events", h.handleEvents)
	h.page("GET /portal/endpoints/new", h.handleNewEndpoint)
	h.action("POST /portal/endpoints", h.handleCreateEndpoint)
	h.page("GET /portal/endpoints/{endpoint}", h.handleDeliveries)
	h.page("GET /portal/endpoints/{endpoint}/edit", h.handleEditEndpoint)
	h.action("POST /portal/endpoints/{endpoint}/edit", h.handleUpdateEndpoint)
	h.action("POST /portal/endpoints/{endpoint}/status", h.handleSetStatus)
	h.action("POST /portal/endpoints/{endpoint}/enable_recover", h.handleEnableRecover)
	h.page("GET /portal/endpoints/{endpoint}/delete", h.handleConfirmDelete)
	h.action("POST /portal/endpoints/{endpoint}/delete", h.handleDeleteEndpoint)
	h.action("POST /portal/endpoints/{endpoint}/rotate", h.handleRotateSecret)
	h.action("POST /portal/endpoints/{endpoint}/reveal", h.handleRevealSecret)
	h.action("POST /portal/endpoints/{endpoint}/test", h.handleSendTest)
	h.action("POST /portal/endpoints/{endpoint}/rehearse", h.handleRehearse)
	h.action("POST /portal/endpoints/{endpoint}/recover", h.handleRecover)
	h.page("GET /portal/endpoints/{endpoint}/deliveries/{delivery}", h.handleDelivery)
	h.page("GET /portal/endpoints/{endpoint}/deliveries/{delivery}/resend", h.handleConfirmResend)
	h.action("POST /portal/endpoints/{endpoint}/deliveries/{delivery}/resend", h.handleResend)
	h.action("POST /portal/logout", h.handleLogout)
	h.page("/portal/", func(http.ResponseWriter, *http.Request, *reqCtx) error { return notFound() })
}

// reqCtx is what a signed-in request's handler gets.
type reqCtx struct {
	sess    session.Session
	caller  app.Caller
	account *webhooks.Account
	now     time.Time
	words   words // the policy's, in words
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, c *reqCtx) error

// page registers a page: it needs a valid session.
func (h *Handler) page(pattern string, fn handlerFunc) {
	h.mux.HandleFunc(pattern, h.signedIn(fn, false))
}

// action registers a state change: it needs a valid session and the
// session's CSRF token in the form.
func (h *Handler) action(pattern string, fn handlerFunc) {
	h.mux.HandleFunc(pattern, h.signedIn(fn, true))
}

// errNoSession: the request carries no session cookie at all.
var errNoSession = errors.New("portal: no session cookie")

// session returns the request's session.
func (h *Handler) session(r *http.Request) (session.Session, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return session.Session{}, errNoSession
	}
	return h.cfg.Sessions.VerifyCookie(c.Value, h.cfg.Now())
}

func (h *Handler) signedIn(fn handlerFunc, post bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := h.session(r)
		if err != nil {
			if errors.Is(err, errNoSession) && !post && crossSiteNavigation(r) {
				// A SameSite=Strict cookie is held back when the
				// navigation started on another site (a link in an
				// email or in another domain's app, through the 303 of
				// the link): load the page again from here, where it is
				// sent.
				h.bounce(w, r)
				return
			}
			h.refuseSession(w, r, err)
			return
		}
		if post {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				h.renderError(w, r, nil, http.StatusBadRequest)
				return
			}
			if !h.cfg.Sessions.CheckCSRF(sess.ID, r.PostForm.Get(csrfField)) {
				h.cfg.Logger.Info("portal: form refused without a valid CSRF token", "route", r.Pattern)
				h.renderError(w, r, nil, http.StatusForbidden)
				return
			}
		}
		caller := app.PortalCaller(sess)
		acct, err := h.cfg.App.Account(r.Context(), caller, sess.AccountID)
		if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			h.renderError(w, r, nil, http.StatusUnauthorized)
			return
		} else if err != nil {
			h.fail(w, r, nil, err)
			return
		}
		c := &reqCtx{sess: sess, caller: caller, account: acct, now: h.cfg.Now(), words: h.words}
		if err := fn(w, r, c); err != nil {
			h.fail(w, r, c, err)
		}
	}
}

// refuseSession renders the 401 page of a link or session cookie that
// VerifyLink or VerifyCookie refused (or of no cookie at all): one whose
// hour is over has expired; one signed with another key (another
// service's, or one from before the admin key was rotated), cut short or
// changed, is not valid, and saying it expired would send the user looking
// for the wrong cause.
func (h *Handler) refuseSession(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, session.ErrInvalid) {
		h.renderError(w, r, nil, http.StatusUnauthorized)
		return
	}
	p := &ErrorPage{Status: http.StatusUnauthorized, SignIn: true}
	p.Title, p.Heading = "Link not valid", "This link is not valid"
	p.Text = "It was not issued by this service, or it was cut short or changed on the way (copy the whole link). " +
		"Ask for a new link: open the integrations page again from your Factuarea account."
	if r.PathValue("token") == "" {
		p.Title, p.Heading = "Session not valid", "Your session is not valid"
		p.Text = "It was not opened by this service, or it was ended when the service changed its keys. " +
			"Ask for a new link: open the integrations page again from your Factuarea account."
	}
	h.render(w, r, nil, http.StatusUnauthorized, "error", p)
}

// crossSiteNavigation reports whether r is a top-level navigation that
// started on another site, by the browser's fetch metadata.
func crossSiteNavigation(r *http.Request) bool {
	return r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.Header.Get("Sec-Fetch-Mode") == "navigate"
}

// handleOpen opens a link: it sets the session cookie and redirects to the
// endpoints page, so that the token leaves the address bar (and any
// Referer).
func (h *Handler) handleOpen(w http.ResponseWriter, r *http.Request) {
	sess, err := h.cfg.Sessions.VerifyLink(r.PathValue("token"), h.cfg.Now())
	if err != nil {
		h.refuseSession(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    h.cfg.Sessions.Cookie(sess),
		Path:     "/portal",
		Expires:  sess.Expires,
		MaxAge:   max(1, int(sess.Expires.Sub(h.cfg.Now())/time.Second)),
		HttpOnly: true,
		Secure:   h.secure || r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/portal/", http.StatusSeeOther)
}

func (h *Handler) handleLogout(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/portal", MaxAge: -1,
		HttpOnly: true, Secure: h.secure || r.TLS != nil, SameSite: http.SameSiteStrictMode})
	h.render(w, r, nil, http.StatusOK, "message", &MessagePage{
		Base:    Base{Title: "Signed out"},
		Heading: "You have signed out",
		Text:    "To see your webhooks again, open the integrations page from your Factuarea account: it gives you a new link.",
	})
	return nil
}

func (h *Handler) handleCSS(w http.ResponseWriter, r *http.Request) {
	css, err := fs.ReadFile(staticFS, "static/portal.css")
	if err != nil {
		h.fail(w, r, nil, err)
		return
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	if r.URL.Query().Get("v") != "" {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	w.Write(css)
}

// bounce loads the same page again, from this site.
func (h *Handler) bounce(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, nil, http.StatusOK, "bounce", &MessagePage{
		Base:    Base{Title: "Opening your integrations"},
		Heading: "Opening your integrations…",
		Text:    r.URL.RequestURI(),
	})
}

// fail renders the page of an error: 404 for a missing object (or another
// account's: the two are the same page), 500 for anything internal.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, c *reqCtx, err error) {
	status := http.StatusInternalServerError
	switch webhooks.ErrorCode(err) {
	case webhooks.ENOTFOUND:
		status = http.StatusNotFound
	case webhooks.EUNAVAILABLE:
		h.cfg.Logger.Warn("portal: service unavailable", "route", r.Pattern, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(int(webhooks.RetryAfterUnavailable/time.Second)))
		status = http.StatusServiceUnavailable
	case webhooks.EINTERNAL:
		if errors.Is(err, context.Canceled) {
			return
		}
		h.cfg.Logger.Error("portal: internal error", "route", r.Pattern, "err", err)
	default:
		// A domain error an action did not turn into a message: show it.
		h.render(w, r, c, http.StatusConflict, "message", &MessagePage{
			Base:    Base{Title: "Not done"},
			Heading: "That could not be done",
			Text:    webhooks.ErrorMessage(err),
		})
		return
	}
	h.renderError(w, r, c, status)
}

// notFound is the error of a missing object, or of another account's.
func notFound() error {
	return webhooks.Errorf(webhooks.ENOTFOUND, "not found")
}

// redirect ends an action with a redirect to a page (POST, redirect, GET),
// with a notice or error code the page turns into a fixed message.
func redirect(w http.ResponseWriter, r *http.Request, path string, query url.Values) error {
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}
