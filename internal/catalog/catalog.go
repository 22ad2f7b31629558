// Package catalog checks events and subscriptions against one version of
// the event-type catalog (SPEC 16), with each type's schema compiled once
// for that version. The use cases (internal/app) keep the current version
// in memory and ask the store to register an event only if the catalog is
// still that version, so that registration reads no catalog from the
// database.
package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	webhooks "github.com/factuarea/webhooks"
)

// Catalog is one version of the catalog. It never changes once made, and
// is safe for concurrent use.
type Catalog struct {
	version  int64
	declared map[string]*entry // the types not archived
	archived map[string]bool
	names    []string // declared, sorted
	prefixes []string // every "a." and "a.b." a declared name starts with, sorted
}

// entry is a declared type and its compiled schema.
type entry struct {
	t      *webhooks.EventType
	schema *Schema // nil when the type has none
	err    error   // a stored schema that no longer compiles
}

// New returns the catalog of version, made of types (archived ones
// included). prev, if not nil, is an earlier version whose compiled
// schemas are kept for the types whose schema has not changed: a change to
// one type compiles one schema.
func New(version int64, types []*webhooks.EventType, prev *Catalog) *Catalog {
	c := &Catalog{version: version, declared: map[string]*entry{}, archived: map[string]bool{}}
	prefixes := map[string]bool{}
	for _, t := range types {
		if t.Archived {
			c.archived[t.Name] = true
			continue
		}
		e := &entry{t: t}
		if len(t.Schema) > 0 {
			if old := prev.entry(t.Name); old != nil && old.schema != nil && bytes.Equal(old.t.Schema, t.Schema) {
				e.schema = old.schema
			} else if e.schema, e.err = Compile(t.Schema); e.err != nil {
				e.err = fmt.Errorf("catalog: the stored schema of %s does not compile: %v", t.Name, e.err)
			}
		}
		c.declared[t.Name] = e
		c.names = append(c.names, t.Name)
		for i := range len(t.Name) {
			if t.Name[i] == '.' {
				prefixes[t.Name[:i+1]] = true
			}
		}
	}
	slices.Sort(c.names)
	for p := range prefixes {
		c.prefixes = append(c.prefixes, p)
	}
	slices.Sort(c.prefixes)
	return c
}

func (c *Catalog) entry(name string) *entry {
	if c == nil {
		return nil
	}
	return c.declared[name]
}

// Version is the catalog's version, as the store counts changes to it.
func (c *Catalog) Version() int64 { return c.version }

// Empty reports whether the catalog declares no type (archived ones do not
// count): types are then free-form.
func (c *Catalog) Empty() bool { return len(c.declared) == 0 }

// Types returns the declared types (not archived), by name.
func (c *Catalog) Types() []*webhooks.EventType {
	out := make([]*webhooks.EventType, len(c.names))
	for i, n := range c.names {
		out[i] = c.declared[n].t
	}
	return out
}

// CheckEvent checks an event of type typ whose data.object is object
// (compact JSON, as webhooks.Event.Validate leaves it). Returns
// EUNKNOWNEVENTTYPE for a type the catalog does not declare (or archived),
// and EINVALIDEVENTDATA for an object its type's schema refuses. An empty
// catalog, and the exempt types (webhooks.CatalogExempt), accept anything.
func (c *Catalog) CheckEvent(typ string, object json.RawMessage) error {
	if c.Empty() || webhooks.CatalogExempt(typ) {
		return nil
	}
	e := c.declared[typ]
	if e == nil {
		return c.unknownType(typ)
	}
	if e.err != nil {
		return e.err
	}
	if e.schema == nil {
		return nil
	}
	return e.schema.Check(object, "data.object", typ)
}

func (c *Catalog) unknownType(typ string) error {
	what := fmt.Sprintf("event type %q is not in the catalog", typ)
	if c.archived[typ] {
		what = fmt.Sprintf("event type %q is archived (it takes no new events)", typ)
	}
	return webhooks.Errorf(webhooks.EUNKNOWNEVENTTYPE, "%s%s", what, suggest(typ, c.names, "", "type"))
}

// CheckPatterns checks the enabled_events patterns of an endpoint: each
// must match a declared type (webhooks.MatchEventType), unless it is
// exempt. Returns EUNKNOWNEVENTTYPE naming the first that matches none,
// with the nearest declared name (or prefix). An empty catalog accepts
// any.
func (c *Catalog) CheckPatterns(patterns []string) error {
	if c.Empty() {
		return nil
	}
	for _, p := range patterns {
		if err := c.checkPattern(p); err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalog) checkPattern(p string) error {
	if webhooks.CatalogExempt(p) {
		return nil
	}
	for _, n := range c.names {
		if webhooks.MatchEventType(p, n) {
			return nil
		}
	}
	what := fmt.Sprintf("enabled_events entry %q matches no event type in the catalog", p)
	if prefix, ok := strings.CutSuffix(p, "*"); ok {
		return webhooks.Errorf(webhooks.EUNKNOWNEVENTTYPE, "%s%s", what, suggest(prefix, c.prefixes, "*", "prefix"))
	}
	if c.archived[p] {
		what = fmt.Sprintf("enabled_events entry %q is an archived event type, which no new event has", p)
	}
	return webhooks.Errorf(webhooks.EUNKNOWNEVENTTYPE, "%s%s", what, suggest(p, c.names, "", "type"))
}
