package portal

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/portal.css
var staticFS embed.FS

// pageNames are the pages; each is parsed with the layout and the shared
// partials into its own template set.
var pageNames = []string{
	"endpoints", "deliveries", "delivery", "events", "endpoint_form", "confirm_delete", "confirm_resend", "secret", "message", "bounce", "error",
}

// pageTemplate is one page's template set.
type pageTemplate struct {
	name string
	tmpl *template.Template
}

// funcs are the few helpers templates need; wording lives in Go.
var funcs = template.FuncMap{
	"join": func(s []string, sep string) string {
		var b bytes.Buffer
		for i, v := range s {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(v)
		}
		return b.String()
	},
}

// parsePages parses one template set per page (pkgsite's way): layout,
// partials and the page. The first error is returned.
func parsePages() (map[string]*pageTemplate, error) {
	out := make(map[string]*pageTemplate, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/partials.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("portal: parsing page %s: %w", name, err)
		}
		if t.Lookup("content") == nil {
			return nil, fmt.Errorf("portal: page %s defines no \"content\" template", name)
		}
		out[name] = &pageTemplate{name: name, tmpl: t}
	}
	return out, nil
}

// Base is what every page's layout shows.
type Base struct {
	Title   string
	Nav     string // the current section: "endpoints" or "events"
	Account *webhooks.Account
	// CSRF is the session's form token; SessionExpires when the session
	// ends.
	CSRF           string
	SessionExpires TimeView
	// Notice is a success, Info what is under way, Error a refusal or a
	// failure: each in its own style.
	Notice string
	Info   string
	Error  string
	CSS    string
	// Refresh, when set, reloads the page after that many seconds (while
	// a send by hand awaits its answer).
	Refresh int
}

func (b *Base) base() *Base { return b }

// page is a page's typed data: a struct embedding Base.
type page interface{ base() *Base }

// MessagePage is a page with a heading and a sentence.
type MessagePage struct {
	Base
	Heading string
	Text    string
}

// ErrorPage is the page of a refused request.
type ErrorPage struct {
	Base
	Status  int
	Heading string
	Text    string
	// SignIn says the problem is the session: the page says how to get a
	// new link instead of offering the portal's navigation.
	SignIn bool
}

// render executes a page into a buffer first, so that a template error is
// a clean 500 and never half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, name string, p page) {
	b := p.base()
	b.CSS = h.css
	if c != nil {
		b.Account = c.account
		b.CSRF = h.cfg.Sessions.CSRFToken(c.sess.ID)
		b.SessionExpires = timeView(c.sess.Expires, c.now)
		if r.Method == http.MethodGet {
			// A page that said what happened itself says nothing more.
			if q := r.URL.Query(); b.Notice == "" && b.Info == "" && b.Error == "" {
				b.Notice = noticeText(q.Get("notice"), q.Get("count"))
				b.Error = errorText(q.Get("error"))
			}
		}
	}
	var buf bytes.Buffer
	if err := h.pages[name].tmpl.ExecuteTemplate(&buf, "layout", p); err != nil {
		h.cfg.Logger.Error("portal: rendering a page", "page", name, "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderError renders the page of status.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, c *reqCtx, status int) {
	p := &ErrorPage{Status: status}
	switch status {
	case http.StatusUnauthorized:
		p.Title, p.Heading, p.SignIn = "Session expired", "Your session has expired", true
		p.Text = "Links to this page work for one hour. Ask for a new link: open the integrations page again from your Factuarea account."
		c = nil
	case http.StatusForbidden:
		p.Title, p.Heading = "Not allowed", "This form has expired"
		p.Text = "The form was not sent from this page, or it belongs to another session, so nothing was changed. Go back, reload the page and try again."
	case http.StatusNotFound:
		p.Title, p.Heading = "Not found", "Not found"
		p.Text = "There is no such page, or what it shows does not exist in your account."
	case http.StatusBadRequest:
		p.Title, p.Heading = "Bad request", "The request could not be read"
		p.Text = "Nothing was changed. Go back and try again."
	case http.StatusServiceUnavailable:
		p.Title, p.Heading = "Unavailable", "The service is unavailable for a moment"
		p.Text = "It cannot reach its database right now. Nothing was changed, and no event is lost: deliveries go on once it is back. Reload the page in a minute."
	default:
		p.Title, p.Heading = "Error", "Something went wrong"
		p.Text = "Nothing you did caused this, and it has been logged. Try again in a moment."
	}
	if status == http.StatusForbidden || status == http.StatusBadRequest {
		// Show the navigation of a valid session, but no session data.
		if sess, err := h.session(r); err == nil && c == nil {
			caller := app.PortalCaller(sess)
			if a, err := h.cfg.App.Account(r.Context(), caller, sess.AccountID); err == nil {
				c = &reqCtx{sess: sess, caller: caller, account: a, now: h.cfg.Now(), words: h.words}
			}
		}
	}
	h.render(w, r, c, status, "error", p)
}

// noticeText is the message a page shows after a successful action. Only
// fixed texts are shown: a query string cannot put words on the page. (A
// send by hand's page says what became of it: DeliveryPage.sendOutcome.)
func noticeText(code, count string) string {
	switch code {
	case "created":
		return "Endpoint created."
	case "updated":
		return "Endpoint updated."
	case "enabled":
		return "Endpoint enabled. What it missed while disabled is not sent by itself: use Recover to send it."
	case "disabled":
		return "Endpoint disabled. Its pending deliveries ended failed, and new events get a failed delivery until you enable it again."
	case "deleted":
		return "Endpoint deleted. Its deliveries were kept in the history of events."
	case "recovered":
		n, _ := strconv.Atoi(count)
		switch n {
		case 0:
			return "Recover found no failed deliveries to send again in that range."
		case 1:
			return "Recover is sending 1 failed delivery again."
		default:
			return fmt.Sprintf("Recover is sending %d failed deliveries again.", n)
		}
	}
	return ""
}

// errorText is the message a page shows after a refused action, by error
// code.
func errorText(code string) string {
	switch code {
	case "":
		return ""
	case webhooks.EENDPOINTDISABLED:
		return "The endpoint is disabled: enable it before sending anything to it."
	case webhooks.ENOTRESENDABLE:
		return "Only failed deliveries can be sent again."
	case webhooks.EOUTSIDEWINDOW:
		return "This event is outside the resend window (30 days for a retry, 90 days for a replay)."
	case webhooks.EWRONGRESEND:
		return "This endpoint does not support that kind of resend."
	case "invalid_since":
		return "Choose a start for Recover that is in the past."
	case "invalid_overlap":
		return "Choose how long the old secret keeps signing: from now to 7 days."
	}
	return "That could not be done. Nothing was changed."
}
