package portal

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// The endpoint actions. Each is a POST whose CSRF token signedIn has
// checked; each decodes its form and calls the use case, which audits the
// change (or its refusal) with the session as actor.

// EndpointFormPage is the form that creates or edits an endpoint.
type EndpointFormPage struct {
	Base
	Editing     bool
	Action      string // where the form posts
	Cancel      string
	Owners      []Option // create only: the account or one of its companies
	URL         string
	Description string
	Events      string // one pattern a line (with a catalog: those that are not its types)
	// Catalog is the event-type catalog's types, each a box to tick;
	// empty while the catalog is (the events are then free text alone).
	Catalog     []TypeChoice
	APIVersions []Option
	Livemode    bool
	// Relationships apply to account endpoints: editing one shows them;
	// creating shows them with a note.
	ShowRelationships bool
	Own, Managed      bool
	// Ordered and AutoRecover are the endpoint's options (SPEC 18, 14),
	// which Words explains.
	Ordered, AutoRecover bool
	Words                words
	FormError            string
	RequireHTTPS         bool
	// Relay is set when editing a relay endpoint (SPEC 20): it has no URL
	// to edit.
	Relay bool
}

// SecretPage shows a secret once: after creation, rotation or reveal.
type SecretPage struct {
	Base
	Endpoint   EndpointView
	Link       string
	Heading    string
	Secret     string
	Created    bool
	Rotated    bool
	OldExpires TimeView // when the old secret stops signing
	OldStopped bool     // the old secret stopped at once
}

// ConfirmDeletePage asks before deleting an endpoint.
type ConfirmDeletePage struct {
	Base
	Endpoint EndpointView
	Link     string
}

func (h *Handler) apiVersionOptions(selected string) []Option {
	var out []Option
	for i, v := range webhooks.APIVersions() {
		label := v
		if i == 0 {
			label += " (newest)"
		}
		out = append(out, Option{Value: v, Label: label, Selected: v == selected})
	}
	return out
}

// endpointRef names an endpoint of the session's account by its id.
func endpointRef(r *http.Request) app.EndpointRef {
	return app.EndpointRef{ID: r.PathValue("endpoint")}
}

// handleNewEndpoint shows the creation form. The owners are the account
// and its companies.
func (h *Handler) handleNewEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	p := &EndpointFormPage{
		Base:   Base{Title: "Add an endpoint", Nav: "endpoints"},
		Action: "/portal/endpoints", Cancel: "/portal/", Livemode: true, Own: true, Managed: true,
		ShowRelationships: true, APIVersions: h.apiVersionOptions(webhooks.LatestAPIVersion),
		RequireHTTPS: !h.cfg.AllowHTTP, Words: c.words,
	}
	if err := h.ownerOptions(r.Context(), c, p, r.URL.Query().Get("owner")); err != nil {
		return err
	}
	// Without a catalog, every event; with one, the customer chooses.
	if err := h.setEvents(r.Context(), c, p, "", nil); err != nil {
		return err
	}
	if len(p.Catalog) == 0 {
		p.Events = "*"
	}
	h.render(w, r, c, http.StatusOK, "endpoint_form", p)
	return nil
}

func (h *Handler) ownerOptions(ctx context.Context, c *reqCtx, p *EndpointFormPage, selected string) error {
	hold, err := h.cfg.App.Holdings(ctx, c.caller, c.account)
	if err != nil {
		return err
	}
	p.Owners = []Option{{Value: "account", Label: "The account: " + c.account.Name + " (all its companies, managed accounts)", Selected: selected == "account" || selected == ""}}
	for _, co := range hold.Companies {
		v := "company:" + co.ID
		p.Owners = append(p.Owners, Option{Value: v, Label: "Company: " + companyLabel(co, co.ID), Selected: selected == v})
	}
	return nil
}

// splitEvents reads the events field: patterns separated by lines, commas
// or spaces.
func splitEvents(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == '\n' || r == '\r' || r == ' ' || r == '\t'
	})
}

// relationships reads the form's own and managed boxes.
func relationships(f url.Values) []webhooks.Relationship {
	rels := []webhooks.Relationship{}
	if f.Get("own") != "" {
		rels = append(rels, webhooks.RelationshipOwn)
	}
	if f.Get("managed") != "" {
		rels = append(rels, webhooks.RelationshipManaged)
	}
	return rels
}

// formError turns a refused change into the form's message; internal
// errors stay errors.
func formError(err error) (string, bool) {
	switch webhooks.ErrorCode(err) {
	case webhooks.EINTERNAL, webhooks.EUNAVAILABLE:
		return "", false
	case webhooks.ENOTFOUND:
		return "There is no such company in your account.", true
	}
	return webhooks.ErrorMessage(err), true
}

func (h *Handler) handleCreateEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	f := r.PostForm
	owner, live := f.Get("owner"), f.Get("livemode") != ""
	in := app.EndpointInput{
		URL: strings.TrimSpace(f.Get("url")), EnabledEvents: formEvents(f), APIVersion: f.Get("api_version"),
		Livemode: &live, Description: strings.TrimSpace(f.Get("description")),
		Ordered: f.Get("ordered") != "", AutoRecover: f.Get("auto_recover") != "",
	}
	p := &EndpointFormPage{
		Base:   Base{Title: "Add an endpoint", Nav: "endpoints"},
		Action: "/portal/endpoints", Cancel: "/portal/", URL: in.URL, Description: in.Description,
		APIVersions: h.apiVersionOptions(in.APIVersion),
		Livemode:    live, ShowRelationships: true, Own: f.Get("own") != "", Managed: f.Get("managed") != "",
		Ordered: in.Ordered, AutoRecover: in.AutoRecover, RequireHTTPS: !h.cfg.AllowHTTP, Words: c.words,
	}
	var ep *app.OwnedEndpoint
	var err error
	switch {
	case owner == "account":
		rels := relationships(f)
		in.Relationships = &rels
		ep, err = h.cfg.App.CreateEndpoint(ctx, c.caller, app.AccountOwner(c.account.ID), in)
	case strings.HasPrefix(owner, "company:"):
		ep, err = h.cfg.App.CreateEndpoint(ctx, c.caller, app.CompanyOwner(strings.TrimPrefix(owner, "company:")), in)
	default:
		err = webhooks.Errorf(webhooks.EINVALID, "Choose what the endpoint belongs to: the account or one of its companies.")
	}
	if err != nil {
		msg, ok := formError(err)
		if !ok {
			return err
		}
		if err := h.ownerOptions(ctx, c, p, owner); err != nil {
			return err
		}
		if err := h.setEvents(ctx, c, p, "", in.EnabledEvents); err != nil {
			return err
		}
		p.FormError = msg
		h.render(w, r, c, http.StatusUnprocessableEntity, "endpoint_form", p)
		return nil
	}
	h.render(w, r, c, http.StatusCreated, "secret", &SecretPage{
		Base:     Base{Title: "Endpoint created", Nav: "endpoints", Notice: noticeText("created", "")},
		Endpoint: h.endpointView(r.Context(), ep.Endpoint, ep.Company, c.now), Link: endpointPath(ep.ID),
		Heading: "Your new endpoint's signing secret", Secret: ep.Secret, Created: true,
	})
	return nil
}

func (h *Handler) handleEditEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ep, err := h.cfg.App.Endpoint(r.Context(), c.caller, endpointRef(r))
	if err != nil {
		return err
	}
	p, err := h.editForm(r.Context(), c, ep.Endpoint, ep.EnabledEvents)
	if err != nil {
		return err
	}
	h.render(w, r, c, http.StatusOK, "endpoint_form", p)
	return nil
}

// editForm is the form that edits ep, with events chosen.
func (h *Handler) editForm(ctx context.Context, c *reqCtx, ep *webhooks.Endpoint, events []string) (*EndpointFormPage, error) {
	p := &EndpointFormPage{
		Base: Base{Title: "Edit " + endpointLabel(ep), Nav: "endpoints"}, Relay: ep.Relay,
		Editing: true, Action: endpointPath(ep.ID) + "/edit", Cancel: endpointPath(ep.ID),
		URL: ep.URL, Description: ep.Description,
		APIVersions: h.apiVersionOptions(ep.APIVersion), Livemode: ep.Livemode,
		ShowRelationships: ep.Scope == webhooks.ScopeAccount,
		Own:               ep.HasRelationship(webhooks.RelationshipOwn), Managed: ep.HasRelationship(webhooks.RelationshipManaged),
		Ordered: ep.Ordered, AutoRecover: ep.AutoRecover, RequireHTTPS: !h.cfg.AllowHTTP, Words: c.words,
	}
	return p, h.setEvents(ctx, c, p, ep.Scope, events)
}

func (h *Handler) handleUpdateEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ep, err := h.cfg.App.Endpoint(ctx, c.caller, endpointRef(r))
	if err != nil {
		return err
	}
	f := r.PostForm
	rawURL, desc, version := strings.TrimSpace(f.Get("url")), strings.TrimSpace(f.Get("description")), f.Get("api_version")
	events := formEvents(f)
	ordered, autoRecover := f.Get("ordered") != "", f.Get("auto_recover") != ""
	u := webhooks.EndpointUpdate{URL: &rawURL, Description: &desc, APIVersion: &version, EnabledEvents: &events,
		Ordered: &ordered, AutoRecover: &autoRecover}
	if ep.Relay {
		u.URL = nil // a relay endpoint has none: the form shows no field
	}
	if ep.Scope == webhooks.ScopeAccount {
		rels := relationships(f)
		u.Relationships = &rels
	}
	if _, err := h.cfg.App.UpdateEndpoint(ctx, c.caller, endpointRef(r), u); err != nil {
		msg, ok := formError(err)
		if !ok || webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return err
		}
		p, err := h.editForm(ctx, c, ep.Endpoint, events)
		if err != nil {
			return err
		}
		p.URL, p.Description, p.APIVersions = rawURL, desc, h.apiVersionOptions(version)
		p.Ordered, p.AutoRecover = ordered, autoRecover
		if u.Relationships != nil {
			p.Own, p.Managed = f.Get("own") != "", f.Get("managed") != ""
		}
		p.FormError = msg
		h.render(w, r, c, http.StatusUnprocessableEntity, "endpoint_form", p)
		return nil
	}
	return redirect(w, r, endpointPath(ep.ID), url.Values{"notice": {"updated"}})
}

func (h *Handler) handleSetStatus(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	status := r.PostForm.Get("status")
	if status != webhooks.EndpointEnabled && status != webhooks.EndpointDisabled {
		return notFound()
	}
	ep, err := h.cfg.App.UpdateEndpoint(r.Context(), c.caller, endpointRef(r), webhooks.EndpointUpdate{Status: &status})
	if err != nil {
		return err
	}
	return redirect(w, r, endpointPath(ep.ID), url.Values{"notice": {status}})
}

func (h *Handler) handleEnableRecover(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ref := endpointRef(r)
	_, n, err := h.cfg.App.EnableAndRecover(r.Context(), c.caller, ref)
	if err != nil {
		return refusedTo(w, r, endpointPath(ref.ID), err, "")
	}
	return redirect(w, r, endpointPath(ref.ID), url.Values{"notice": {"recovered"}, "count": {strconv.Itoa(n)}})
}

func (h *Handler) handleConfirmDelete(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ep, err := h.cfg.App.Endpoint(r.Context(), c.caller, endpointRef(r))
	if err != nil {
		return err
	}
	h.render(w, r, c, http.StatusOK, "confirm_delete", &ConfirmDeletePage{
		Base:     Base{Title: "Delete " + endpointLabel(ep.Endpoint), Nav: "endpoints"},
		Endpoint: h.endpointView(r.Context(), ep.Endpoint, ep.Company, c.now), Link: endpointPath(ep.ID),
	})
	return nil
}

func (h *Handler) handleDeleteEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ref := endpointRef(r)
	if r.PostForm.Get("confirm") != "yes" {
		if _, err := h.cfg.App.Endpoint(r.Context(), c.caller, ref); err != nil {
			return err
		}
		return redirect(w, r, endpointPath(ref.ID)+"/delete", nil)
	}
	if err := h.cfg.App.DeleteEndpoint(r.Context(), c.caller, ref); err != nil {
		return err
	}
	return redirect(w, r, "/portal/", url.Values{"notice": {"deleted"}})
}

// refusedTo ends a refused action with a redirect to path, whose page says
// why; invalid is the page's error code for a refused form value. Internal
// errors, and "not found", are not refusals: they are returned.
func refusedTo(w http.ResponseWriter, r *http.Request, path string, err error, invalid string) error {
	code := webhooks.ErrorCode(err)
	switch code {
	case webhooks.EINTERNAL, webhooks.EUNAVAILABLE, webhooks.ENOTFOUND:
		return err
	case webhooks.EINVALID:
		code = invalid
	}
	return redirect(w, r, path, url.Values{"error": {code}})
}

func (h *Handler) handleRotateSecret(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ref := endpointRef(r)
	secs, err := strconv.ParseInt(r.PostForm.Get("expires_in"), 10, 64)
	if err != nil {
		return redirect(w, r, endpointPath(ref.ID), url.Values{"error": {"invalid_overlap"}})
	}
	rot, err := h.cfg.App.RotateSecret(r.Context(), c.caller, ref, &secs)
	if err != nil {
		return refusedTo(w, r, endpointPath(ref.ID), err, "invalid_overlap")
	}
	p := &SecretPage{
		Base:     Base{Title: "Secret rotated", Nav: "endpoints"},
		Endpoint: h.endpointView(r.Context(), rot.Endpoint.Endpoint, rot.Endpoint.Company, c.now), Link: endpointPath(ref.ID),
		Heading: "The new signing secret", Secret: rot.Secret, Rotated: true,
	}
	if rot.PreviousStopped {
		p.OldStopped = true
	} else {
		p.OldExpires = timeView(rot.PreviousExpires, c.now)
	}
	h.render(w, r, c, http.StatusOK, "secret", p)
	return nil
}

func (h *Handler) handleRevealSecret(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ep, err := h.cfg.App.RevealSecret(r.Context(), c.caller, endpointRef(r))
	if err != nil {
		return err
	}
	h.render(w, r, c, http.StatusOK, "secret", &SecretPage{
		Base:     Base{Title: "Signing secret", Nav: "endpoints"},
		Endpoint: h.endpointView(r.Context(), ep.Endpoint, ep.Company, c.now), Link: endpointPath(ep.ID),
		Heading: "The endpoint's signing secret", Secret: ep.Secret,
	})
	return nil
}

func (h *Handler) handleSendTest(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ref := endpointRef(r)
	d, err := h.cfg.App.SendTestEvent(r.Context(), c.caller, ref)
	if err != nil {
		return refusedTo(w, r, endpointPath(ref.ID), err, "")
	}
	return redirect(w, r, deliveryPath(ref.ID, d.ID), url.Values{"notice": {"test_sent"}})
}

func (h *Handler) handleRehearse(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ref := endpointRef(r)
	d, err := h.cfg.App.SendRehearsal(r.Context(), c.caller, ref)
	if err != nil {
		return refusedTo(w, r, endpointPath(ref.ID), err, "")
	}
	return redirect(w, r, deliveryPath(ref.ID, d.ID), url.Values{"notice": {"rehearsal_started"}})
}

// recoverLayout is the datetime-local input's format.
const recoverLayout = "2006-01-02T15:04"

func (h *Handler) handleRecover(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ref := endpointRef(r)
	since, err := time.ParseInLocation(recoverLayout, r.PostForm.Get("since"), time.UTC)
	if err != nil {
		return redirect(w, r, endpointPath(ref.ID), url.Values{"error": {"invalid_since"}})
	}
	secs := since.Unix()
	n, err := h.cfg.App.Recover(r.Context(), c.caller, ref, app.RecoverInput{Since: &secs})
	if err != nil {
		return refusedTo(w, r, endpointPath(ref.ID), err, "invalid_since")
	}
	return redirect(w, r, endpointPath(ref.ID), url.Values{"notice": {"recovered"}, "count": {strconv.Itoa(n)}})
}

// handleResend retries (account endpoint) or replays (company endpoint) a
// delivery: the action follows the endpoint's scope. Replaying an event
// that a replay delivered, or is sending, asks first.
func (h *Handler) handleResend(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ref, id := endpointRef(r), r.PathValue("delivery")
	if !confirmed(r.PostForm) {
		ask, ok, err := h.needsConfirm(r, c)
		if err != nil {
			return err
		}
		if ok {
			return redirect(w, r, ask, nil)
		}
	}
	out, err := h.cfg.App.Resend(r.Context(), c.caller, ref, id, "")
	if err != nil {
		return refusedTo(w, r, deliveryPath(ref.ID, id), err, "")
	}
	notice := "retried"
	if out.ID != id {
		notice = "replayed"
	}
	return redirect(w, r, deliveryPath(ref.ID, out.ID), url.Values{"notice": {notice}})
}
