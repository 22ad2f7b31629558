package portal

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/signature"
)

// The endpoint actions. Each is a POST whose CSRF token signedIn has
// checked; each change is audited by the store with the session as actor,
// and a refused one with refuse, as the JSON API does.

// EndpointFormPage is the form that creates or edits an endpoint.
type EndpointFormPage struct {
	Base
	Editing     bool
	Action      string // where the form posts
	Cancel      string
	Owners      []Option // create only: the account or one of its companies
	URL         string
	Description string
	Events      string // one pattern a line
	APIVersions []Option
	Livemode    bool
	// Relationships apply to account endpoints: editing one shows them;
	// creating shows them with a note.
	ShowRelationships bool
	Own, Managed      bool
	FormError         string
	RequireHTTPS      bool
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

// handleNewEndpoint shows the creation form. The owners are the account
// and the companies loadOwned finds.
func (h *Handler) handleNewEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	p := &EndpointFormPage{
		Base:   Base{Title: "Add an endpoint", Nav: "endpoints"},
		Action: "/portal/endpoints", Cancel: "/portal/", Livemode: true, Own: true, Managed: true,
		ShowRelationships: true, Events: "*", APIVersions: h.apiVersionOptions(webhooks.LatestAPIVersion),
		RequireHTTPS: !h.cfg.AllowHTTP,
	}
	if err := h.ownerOptions(r.Context(), c, p, r.URL.Query().Get("owner")); err != nil {
		return err
	}
	h.render(w, r, c, http.StatusOK, "endpoint_form", p)
	return nil
}

func (h *Handler) ownerOptions(ctx context.Context, c *reqCtx, p *EndpointFormPage, selected string) error {
	o, err := h.loadOwned(ctx, c.account.ID)
	if err != nil {
		return err
	}
	p.Owners = []Option{{Value: "account", Label: "The account: " + c.account.Name + " (all its companies, managed accounts)", Selected: selected == "account" || selected == ""}}
	for _, co := range o.companies {
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

// checkURL runs the SSRF guard's creation-time check, as the API does.
func (h *Handler) checkURL(ctx context.Context, ep *webhooks.Endpoint) error {
	if h.cfg.URLs == nil {
		return nil
	}
	u, err := h.cfg.URLs.CheckURL(ctx, ep.URL, ep.Livemode && !h.cfg.AllowHTTP)
	if err != nil {
		return err
	}
	ep.URL = u.String()
	return nil
}

// formError turns a refused change into the form's message; internal
// errors stay errors.
func formError(err error) (string, bool) {
	if webhooks.ErrorCode(err) == webhooks.EINTERNAL {
		return "", false
	}
	return webhooks.ErrorMessage(err), true
}

func (h *Handler) handleCreateEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	f := r.PostForm
	owner := f.Get("owner")
	now := h.cfg.Now()
	ep := &webhooks.Endpoint{
		ID: webhooks.NewID(), URL: strings.TrimSpace(f.Get("url")), EnabledEvents: splitEvents(f.Get("events")),
		APIVersion: f.Get("api_version"), Livemode: f.Get("livemode") != "", Description: strings.TrimSpace(f.Get("description")),
		Status: webhooks.EndpointEnabled, Created: now, Updated: now,
	}
	p := &EndpointFormPage{
		Base:   Base{Title: "Add an endpoint", Nav: "endpoints"},
		Action: "/portal/endpoints", Cancel: "/portal/", URL: ep.URL, Description: ep.Description,
		Events: strings.Join(ep.EnabledEvents, "\n"), APIVersions: h.apiVersionOptions(ep.APIVersion),
		Livemode: ep.Livemode, ShowRelationships: true, Own: f.Get("own") != "", Managed: f.Get("managed") != "",
		RequireHTTPS: !h.cfg.AllowHTTP,
	}
	var co *webhooks.Company
	err := func() error {
		switch {
		case owner == "account":
			ep.Scope, ep.AccountID = webhooks.ScopeAccount, c.account.ID
			rels := []webhooks.Relationship{}
			if p.Own {
				rels = append(rels, webhooks.RelationshipOwn)
			}
			if p.Managed {
				rels = append(rels, webhooks.RelationshipManaged)
			}
			ep.Relationships = rels
		case strings.HasPrefix(owner, "company:"):
			id := strings.TrimPrefix(owner, "company:")
			var err error
			if webhooks.ValidID(id) {
				co, err = h.cfg.Store.FindCompany(ctx, id)
			}
			if !webhooks.ValidID(id) || webhooks.ErrorCode(err) == webhooks.ENOTFOUND || (err == nil && co.AccountID != c.account.ID) {
				return webhooks.Errorf(webhooks.EINVALID, "There is no such company in your account.")
			} else if err != nil {
				return err
			}
			ep.Scope, ep.CompanyID = webhooks.ScopeCompany, co.ID
		default:
			return webhooks.Errorf(webhooks.EINVALID, "Choose what the endpoint belongs to: the account or one of its companies.")
		}
		if err := ep.Validate(); err != nil {
			return err
		}
		if err := h.checkURL(ctx, ep); err != nil {
			return err
		}
		var err error
		if ep.Secret, err = signature.NewSecret(); err != nil {
			return err
		}
		return h.cfg.Store.CreateEndpoint(ctx, ep, c.audit())
	}()
	if err != nil {
		msg, ok := formError(err)
		if !ok {
			return err
		}
		if err := h.ownerOptions(ctx, c, p, owner); err != nil {
			return err
		}
		p.FormError = msg
		h.render(w, r, c, http.StatusUnprocessableEntity, "endpoint_form", p)
		return nil
	}
	h.render(w, r, c, http.StatusCreated, "secret", &SecretPage{
		Base:     Base{Title: "Endpoint created", Nav: "endpoints", Notice: noticeText("created", "")},
		Endpoint: endpointView(ep, co, c.now), Link: endpointPath(ep.ID),
		Heading: "Your new endpoint's signing secret", Secret: ep.Secret, Created: true,
	})
	return nil
}

func (h *Handler) handleEditEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ep, _, err := h.endpoint(r.Context(), c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	h.render(w, r, c, http.StatusOK, "endpoint_form", h.editForm(ep))
	return nil
}

func (h *Handler) editForm(ep *webhooks.Endpoint) *EndpointFormPage {
	return &EndpointFormPage{
		Base:    Base{Title: "Edit " + shortURL(ep.URL), Nav: "endpoints"},
		Editing: true, Action: endpointPath(ep.ID) + "/edit", Cancel: endpointPath(ep.ID),
		URL: ep.URL, Description: ep.Description, Events: strings.Join(ep.EnabledEvents, "\n"),
		APIVersions: h.apiVersionOptions(ep.APIVersion), Livemode: ep.Livemode,
		ShowRelationships: ep.Scope == webhooks.ScopeAccount,
		Own:               ep.HasRelationship(webhooks.RelationshipOwn), Managed: ep.HasRelationship(webhooks.RelationshipManaged),
		RequireHTTPS: !h.cfg.AllowHTTP,
	}
}

func (h *Handler) handleUpdateEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ep, _, err := h.endpoint(ctx, c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	f := r.PostForm
	u := &webhooks.EndpointUpdate{}
	rawURL, desc, version := strings.TrimSpace(f.Get("url")), strings.TrimSpace(f.Get("description")), f.Get("api_version")
	events := splitEvents(f.Get("events"))
	u.URL, u.Description, u.APIVersion, u.EnabledEvents = &rawURL, &desc, &version, &events
	if ep.Scope == webhooks.ScopeAccount {
		rels := []webhooks.Relationship{}
		if f.Get("own") != "" {
			rels = append(rels, webhooks.RelationshipOwn)
		}
		if f.Get("managed") != "" {
			rels = append(rels, webhooks.RelationshipManaged)
		}
		u.Relationships = &rels
	}
	err = func() error {
		// Validate on a copy first, so that the guard sees the final URL,
		// and only when it changed.
		check := *ep
		if err := u.Apply(&check); err != nil {
			return err
		}
		if check.URL != ep.URL {
			if err := h.checkURL(ctx, &check); err != nil {
				return err
			}
			u.URL = &check.URL
		} else {
			u.URL = nil
		}
		_, err := h.cfg.Store.UpdateEndpoint(ctx, ep.ID, u, h.cfg.Now(), c.audit())
		return err
	}()
	if err != nil {
		msg, ok := formError(err)
		if !ok {
			return err
		}
		p := h.editForm(ep)
		p.URL, p.Description, p.Events, p.APIVersions = rawURL, desc, strings.Join(events, "\n"), h.apiVersionOptions(version)
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
	ep, _, err := h.endpoint(r.Context(), c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	status := r.PostForm.Get("status")
	if status != webhooks.EndpointEnabled && status != webhooks.EndpointDisabled {
		return notFound()
	}
	if _, err := h.cfg.Store.UpdateEndpoint(r.Context(), ep.ID, &webhooks.EndpointUpdate{Status: &status}, h.cfg.Now(), c.audit()); err != nil {
		return err
	}
	return redirect(w, r, endpointPath(ep.ID), url.Values{"notice": {status}})
}

func (h *Handler) handleConfirmDelete(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ep, co, err := h.endpoint(r.Context(), c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	h.render(w, r, c, http.StatusOK, "confirm_delete", &ConfirmDeletePage{
		Base:     Base{Title: "Delete " + shortURL(ep.URL), Nav: "endpoints"},
		Endpoint: endpointView(ep, co, c.now), Link: endpointPath(ep.ID),
	})
	return nil
}

func (h *Handler) handleDeleteEndpoint(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ep, _, err := h.endpoint(r.Context(), c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	if r.PostForm.Get("confirm") != "yes" {
		return redirect(w, r, endpointPath(ep.ID)+"/delete", nil)
	}
	if err := h.cfg.Store.DeleteEndpoint(r.Context(), ep.ID, h.cfg.Now(), c.audit()); err != nil {
		return err
	}
	return redirect(w, r, "/portal/", url.Values{"notice": {"deleted"}})
}

func (h *Handler) handleRotateSecret(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ep, co, err := h.endpoint(ctx, c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	secs, err := strconv.ParseInt(r.PostForm.Get("expires_in"), 10, 64)
	overlap := time.Duration(secs) * time.Second
	if err != nil || secs < 0 || overlap > webhooks.MaxSecretOverlap {
		h.refuse(ctx, c, webhooks.AuditEndpointSecretRotated, webhooks.TargetEndpoint, ep.ID,
			webhooks.Errorf(webhooks.EINVALID, "invalid overlap"))
		return redirect(w, r, endpointPath(ep.ID), url.Values{"error": {"invalid_overlap"}})
	}
	secret, err := signature.NewSecret()
	if err != nil {
		return err
	}
	now := h.cfg.Now()
	// Whole seconds, as the API: the old secret stops exactly when shown.
	expires := now.Add(overlap).Truncate(time.Second)
	updated, err := h.cfg.Store.RotateSecret(ctx, ep.ID, secret, expires, now, c.audit())
	if err != nil {
		return err
	}
	p := &SecretPage{
		Base:     Base{Title: "Secret rotated", Nav: "endpoints"},
		Endpoint: endpointView(updated, co, c.now), Link: endpointPath(ep.ID),
		Heading: "The new signing secret", Secret: secret, Rotated: true,
	}
	if overlap == 0 {
		p.OldStopped = true
	} else {
		p.OldExpires = timeView(expires, c.now)
	}
	h.render(w, r, c, http.StatusOK, "secret", p)
	return nil
}

func (h *Handler) handleRevealSecret(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ep, co, err := h.endpoint(ctx, c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	e := c.audit()
	e.AccountID, e.Action, e.TargetType, e.TargetID = c.account.ID, webhooks.AuditEndpointSecretRevealed, webhooks.TargetEndpoint, ep.ID
	e.Outcome, e.Created = webhooks.AuditSucceeded, h.cfg.Now()
	if err := h.cfg.Store.RecordAudit(ctx, e); err != nil {
		return err
	}
	h.render(w, r, c, http.StatusOK, "secret", &SecretPage{
		Base:     Base{Title: "Signing secret", Nav: "endpoints"},
		Endpoint: endpointView(ep, co, c.now), Link: endpointPath(ep.ID),
		Heading: "The endpoint's signing secret", Secret: ep.Secret,
	})
	return nil
}

func (h *Handler) handleSendTest(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ep, _, err := h.endpoint(ctx, c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	d, err := h.cfg.Store.SendTestEvent(ctx, ep.ID, h.cfg.Now(), c.audit())
	if err != nil {
		if err := h.refuse(ctx, c, webhooks.AuditEndpointTestSent, webhooks.TargetEndpoint, ep.ID, err); err != nil {
			return err
		}
		return redirect(w, r, endpointPath(ep.ID), url.Values{"error": {webhooks.ErrorCode(err)}})
	}
	h.cfg.Wake()
	return redirect(w, r, deliveryPath(ep.ID, d.ID), url.Values{"notice": {"test_sent"}})
}

// recoverLayout is the datetime-local input's format.
const recoverLayout = "2006-01-02T15:04"

func (h *Handler) handleRecover(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ep, _, err := h.endpoint(ctx, c, r.PathValue("endpoint"))
	if err != nil {
		return err
	}
	now := h.cfg.Now()
	since, perr := time.ParseInLocation(recoverLayout, r.PostForm.Get("since"), time.UTC)
	if perr != nil || !since.Before(now) {
		return redirect(w, r, endpointPath(ep.ID), url.Values{"error": {"invalid_since"}})
	}
	n, err := h.cfg.Store.Recover(ctx, ep.ID, since, now, now, c.audit())
	if err != nil {
		if err := h.refuse(ctx, c, webhooks.AuditEndpointRecovered, webhooks.TargetEndpoint, ep.ID, err); err != nil {
			return err
		}
		return redirect(w, r, endpointPath(ep.ID), url.Values{"error": {webhooks.ErrorCode(err)}})
	}
	if n > 0 {
		h.cfg.Wake()
	}
	return redirect(w, r, endpointPath(ep.ID), url.Values{"notice": {"recovered"}, "count": {strconv.Itoa(n)}})
}

// handleResend retries (account endpoint) or replays (company endpoint) a
// delivery: the action follows the endpoint's scope.
func (h *Handler) handleResend(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	ctx := r.Context()
	ep, _, d, err := h.delivery(ctx, c, r)
	if err != nil {
		return err
	}
	resend, audit, notice := h.cfg.Store.RetryDelivery, webhooks.AuditDeliveryRetried, "retried"
	if webhooks.ResendAction(ep.Scope) == webhooks.ActionReplay {
		resend, audit, notice = h.cfg.Store.ReplayDelivery, webhooks.AuditDeliveryReplayed, "replayed"
	}
	out, err := resend(ctx, d.ID, h.cfg.Now(), c.audit())
	if err != nil {
		if err := h.refuse(ctx, c, audit, webhooks.TargetDelivery, d.ID, err); err != nil {
			return err
		}
		return redirect(w, r, deliveryPath(ep.ID, d.ID), url.Values{"error": {webhooks.ErrorCode(err)}})
	}
	h.cfg.Wake()
	return redirect(w, r, deliveryPath(ep.ID, out.ID), url.Values{"notice": {notice}})
}

// refuse records a refused change in the audit log. Internal errors and
// "not found" are returned instead (they are not refusals, and the log
// never names another account's objects); nil means the refusal was
// recorded (or logging it failed, which is logged) and the caller shows
// it.
func (h *Handler) refuse(ctx context.Context, c *reqCtx, action, targetType, targetID string, err error) error {
	code := webhooks.ErrorCode(err)
	if code == webhooks.EINTERNAL || code == webhooks.ENOTFOUND {
		return err
	}
	e := c.audit()
	e.AccountID, e.Action, e.TargetType, e.TargetID = c.account.ID, action, targetType, targetID
	e.Outcome, e.ErrorCode, e.Created = webhooks.AuditRefused, code, h.cfg.Now()
	if aerr := h.cfg.Store.RecordAudit(ctx, e); aerr != nil {
		h.cfg.Logger.Error("portal: recording a refused change failed", "action", action, "err", aerr)
	}
	return nil
}
