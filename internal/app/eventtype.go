package app

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/catalog"
)

// The catalog's use cases (SPEC 16). The catalog is the platform's: the
// admin declares, changes and archives types; every caller may read it.
// Its changes are not in the audit log, which is an account's; each is
// logged.

// EventTypeInput is a declaration of an event type.
type EventTypeInput struct {
	Name        string
	Description string
	Example     json.RawMessage // nil or JSON null: none
	Schema      json.RawMessage // nil or JSON null: none
}

// CreateEventType declares an event type. Declaring the name of an
// archived type again un-archives it, with the new description, example
// and schema (it keeps its created time): the name is in use again, as
// the old events of it are. Declaring a type that is declared already
// answers EEVENTTYPEEXISTS (UpdateEventType changes it). Admin only.
func (a *App) CreateEventType(ctx context.Context, c Caller, in EventTypeInput) (*webhooks.EventType, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	now := a.cfg.Now()
	t := &webhooks.EventType{Name: in.Name, Description: in.Description, Example: in.Example, Schema: in.Schema, Created: now, Updated: now}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if err := checkDocuments(t); err != nil {
		return nil, err
	}
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockCatalog(ctx); err != nil {
			return err
		}
		old, err := tx.FindEventType(ctx, t.Name)
		switch {
		case webhooks.ErrorCode(err) == webhooks.ENOTFOUND:
			return tx.InsertEventType(ctx, t)
		case err != nil:
			return err
		case !old.Archived:
			return webhooks.Errorf(webhooks.EEVENTTYPEEXISTS, "event type %s is declared already: PATCH /v1/event_types/%s changes it.", t.Name, t.Name)
		}
		t.Created = old.Created
		return tx.UpdateEventType(ctx, t)
	})
	if err != nil {
		return nil, err
	}
	a.catalogChanged()
	a.cfg.Logger.Info("catalog: event type declared", "name", t.Name, "schema", t.Schema != nil)
	return t, nil
}

// checkDocuments checks what Validate cannot: that t's schema is a JSON
// Schema, and that its example matches it.
func checkDocuments(t *webhooks.EventType) error {
	if t.Schema == nil {
		return nil
	}
	s, err := catalog.Compile(t.Schema)
	if err != nil {
		return err
	}
	if t.Example == nil {
		return nil
	}
	return s.Check(t.Example, "example", t.Name)
}

// UpdateEventType changes a declared type's description, example or
// schema, archived or not; its example must match its schema after the
// change. Returns ENOTFOUND for a type never declared. Admin only.
func (a *App) UpdateEventType(ctx context.Context, c Caller, name string, u webhooks.EventTypeUpdate) (*webhooks.EventType, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	if webhooks.ValidateEventType(name) != nil {
		return nil, webhooks.NotFound("event type")
	}
	// Checked first on the type as it is, so that the catalog is not
	// locked while a schema compiles; checked again in the transaction
	// only if what it checks changed meanwhile.
	old, err := a.cfg.Store.FindEventType(ctx, name)
	if err != nil {
		return nil, err
	}
	checked := *old
	if err := u.Apply(&checked); err != nil {
		return nil, err
	}
	if err := checkDocuments(&checked); err != nil {
		return nil, err
	}
	var updated *webhooks.EventType
	err = a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockCatalog(ctx); err != nil {
			return err
		}
		cur, err := tx.FindEventType(ctx, name)
		if err != nil {
			return err
		}
		t := *cur
		if err := u.Apply(&t); err != nil {
			return err
		}
		if !bytes.Equal(t.Schema, checked.Schema) || !bytes.Equal(t.Example, checked.Example) {
			if err := checkDocuments(&t); err != nil {
				return err
			}
		}
		t.Updated = a.cfg.Now()
		updated = &t
		return tx.UpdateEventType(ctx, &t)
	})
	if err != nil {
		return nil, err
	}
	a.catalogChanged()
	a.cfg.Logger.Info("catalog: event type updated", "name", name, "schema", updated.Schema != nil)
	return updated, nil
}

// ArchiveEventType archives a declared type: it stays listed, with
// Archived set, but events of it are refused as if it were not declared,
// and it counts for no subscription (endpoints that have it keep it). An
// archived type stays archived. Returns ENOTFOUND for a type never
// declared. Admin only.
func (a *App) ArchiveEventType(ctx context.Context, c Caller, name string) (*webhooks.EventType, error) {
	if err := c.requireAdmin(); err != nil {
		return nil, err
	}
	if webhooks.ValidateEventType(name) != nil {
		return nil, webhooks.NotFound("event type")
	}
	var archived *webhooks.EventType
	err := a.cfg.Store.InTx(ctx, func(tx Tx) error {
		if err := tx.LockCatalog(ctx); err != nil {
			return err
		}
		t, err := tx.FindEventType(ctx, name)
		if err != nil {
			return err
		}
		archived = t
		if t.Archived {
			return nil
		}
		t.Archived, t.Updated = true, a.cfg.Now()
		return tx.UpdateEventType(ctx, t)
	})
	if err != nil {
		return nil, err
	}
	a.catalogChanged()
	a.cfg.Logger.Info("catalog: event type archived", "name", name)
	return archived, nil
}

// EventType returns a type of the catalog, archived or not. Every caller
// may read the catalog.
func (a *App) EventType(ctx context.Context, c Caller, name string) (*webhooks.EventType, error) {
	if webhooks.ValidateEventType(name) != nil {
		return nil, webhooks.NotFound("event type")
	}
	return a.cfg.Store.FindEventType(ctx, name)
}

// ListEventTypes lists the catalog in name order, archived types too;
// the page's cursor is a type's name.
func (a *App) ListEventTypes(ctx context.Context, c Caller, p webhooks.Page) (*webhooks.List[*webhooks.EventType], error) {
	if err := p.ValidateLimit(); err != nil {
		return nil, err
	}
	if p.StartingAfter != "" && webhooks.ValidateEventType(p.StartingAfter) != nil {
		return nil, webhooks.Errorf(webhooks.EINVALID, "starting_after must be the name of an event type of the list.")
	}
	return a.cfg.Store.ListEventTypes(ctx, p)
}

// CatalogTypes returns the declared types (not archived), by name: the
// choices of the portal's endpoint form. None while the catalog is empty.
func (a *App) CatalogTypes(ctx context.Context, c Caller) ([]*webhooks.EventType, error) {
	cat, err := a.freshCatalog(ctx)
	if err != nil {
		return nil, err
	}
	return cat.Types(), nil
}

// checkSubscriptions refuses, once the catalog declares types, patterns
// that match none of them (EUNKNOWNEVENTTYPE, with the nearest name).
func (a *App) checkSubscriptions(ctx context.Context, patterns []string) error {
	if len(patterns) == 0 {
		return nil
	}
	cat, err := a.freshCatalog(ctx)
	if err != nil {
		return err
	}
	return cat.CheckPatterns(patterns)
}

// addedPatterns returns the patterns of now that before did not have: a
// change of an endpoint's subscriptions is checked against the catalog on
// what it adds, so that a pattern whose types were archived since does not
// refuse every later change of the endpoint.
func addedPatterns(before, now []string) []string {
	var out []string
	for _, p := range now {
		if !slices.Contains(before, p) {
			out = append(out, p)
		}
	}
	return out
}
