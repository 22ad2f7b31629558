package portal

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	webhooks "github.com/factuarea/webhooks"
)

// TypeChoice is one type of the catalog as the endpoint form offers it: a
// box to tick, with what the type means and an example on demand.
type TypeChoice struct {
	ID          string // the box's id
	Name        string
	Description string
	Example     string // indented JSON; empty when the type has none
	Checked     bool
	// AccountOnly marks an account.* type on a form whose owner is not
	// chosen yet: only account endpoints receive them.
	AccountOnly bool
}

// eventsField is the form's boxes of catalog types; the free-text field
// "events" holds the other patterns (prefixes, *).
const eventsField = "event_type"

// setEvents fills the form's events: with a catalog, each pattern that is
// one of its types ticks its box and the others stay free text; without
// one, every pattern is free text. A company endpoint's form (scope
// company) leaves out the account.* types, which it cannot receive; a
// form whose owner is not chosen yet (scope "") marks them.
func (h *Handler) setEvents(ctx context.Context, c *reqCtx, p *EndpointFormPage, scope webhooks.Scope, patterns []string) error {
	types, err := h.cfg.App.CatalogTypes(ctx, c.caller)
	if err != nil {
		return err
	}
	if scope == webhooks.ScopeCompany {
		types = slices.DeleteFunc(types, func(t *webhooks.EventType) bool { return webhooks.IsAccountEventType(t.Name) })
	}
	p.Catalog = p.Catalog[:0]
	var rest []string
	for _, pat := range patterns {
		if !slices.ContainsFunc(types, func(t *webhooks.EventType) bool { return t.Name == pat }) {
			rest = append(rest, pat)
		}
	}
	for i, t := range types {
		p.Catalog = append(p.Catalog, TypeChoice{
			ID: "type-" + strconv.Itoa(i), Name: t.Name, Description: t.Description, Example: indentJSON(t.Example),
			Checked: slices.Contains(patterns, t.Name), AccountOnly: scope == "" && webhooks.IsAccountEventType(t.Name),
		})
	}
	p.Events = strings.Join(rest, "\n")
	return nil
}

// formEvents reads the patterns a form asks for: the catalog's boxes
// ticked, then the free text.
func formEvents(f url.Values) []string {
	return append(slices.Clone(f[eventsField]), splitEvents(f.Get("events"))...)
}

func indentJSON(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
