package webhooks

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// EventType is a type of event the platform declares in its catalog (SPEC
// 16). While the catalog declares none, types are free-form; once it
// declares one, producers register only declared types, endpoints
// subscribe only to patterns that match one, and an event of a type with a
// schema must match it.
type EventType struct {
	Name        string
	Description string
	// Example is an example data.object (compact JSON, its keys in the
	// order given), shown to the customers who choose what to subscribe
	// to; nil when there is none. It matches Schema.
	Example json.RawMessage
	// Schema is the JSON Schema every data.object of the type matches
	// (compact JSON); nil when there is none.
	Schema json.RawMessage
	// Archived types stay in the catalog's list, but take no new events
	// and count for no subscription, as if they were not declared.
	Archived bool
	Created  time.Time
	Updated  time.Time
}

// MaxEventTypeDocument bounds an event type's example and its schema, in
// bytes of compact JSON: the catalog is held in memory by every process.
const MaxEventTypeDocument = 64 << 10

// operationalPrefixes name the types of the operational events the
// service registers about its own deliveries (SPEC 14).
var operationalPrefixes = []string{"webhook_endpoint.", "webhook_delivery."}

// CatalogExempt reports whether typ is outside the catalog's rules: ping,
// the test event, and the operational events the service itself registers
// (webhook_endpoint.*, webhook_delivery.*). The platform does not declare
// them, and the catalog neither refuses them nor counts them. It is true of
// the patterns that name only such types, too.
func CatalogExempt(typ string) bool {
	if typ == PingEventType {
		return true
	}
	for _, p := range operationalPrefixes {
		if strings.HasPrefix(typ, p) {
			return true
		}
	}
	return false
}

// Validate checks a declaration and compacts its example and schema. It
// does not check that the schema is a JSON Schema, or that the example
// matches it: internal/catalog compiles schemas.
func (t *EventType) Validate() error {
	if err := validateTypeName("name", t.Name); err != nil {
		return err
	}
	if CatalogExempt(t.Name) {
		return Errorf(EINVALID, "%s is one of the service's own operational events (webhook_endpoint.*, webhook_delivery.*): they need no declaration.", t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		return Errorf(EINVALID, "description is required: say when the event happens, for the customers who subscribe to it.")
	}
	if err := CheckLength("description", t.Description, MaxDescriptionLength); err != nil {
		return err
	}
	var err error
	if t.Example, err = jsonDocument("example", "an example data.object", t.Example); err != nil {
		return err
	}
	if t.Schema, err = jsonDocument("schema", "a JSON Schema for data.object", t.Schema); err != nil {
		return err
	}
	return nil
}

// jsonDocument checks one of a declaration's documents, what, given in
// field: absent or JSON null is none (nil); otherwise a JSON object, which
// it returns compact.
func jsonDocument(field, what string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if !utf8.Valid(raw) {
		return nil, Errorf(EINVALIDJSON, "%s is not valid UTF-8.", field)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, Errorf(EINVALIDJSON, "%s is not valid JSON.", field)
	}
	if raw[0] != '{' {
		return nil, Errorf(EINVALID, "%s must be a JSON object: %s.", field, what)
	}
	if compact.Len() > MaxEventTypeDocument {
		return nil, Errorf(EINVALID, "%s must be at most %d KiB of JSON.", field, MaxEventTypeDocument>>10)
	}
	return compact.Bytes(), nil
}

// EventTypeUpdate holds what a PATCH of an event type may change; nil
// leaves a field as it is. Example or Schema set to JSON null (or empty)
// removes it.
type EventTypeUpdate struct {
	Description *string
	Example     *json.RawMessage
	Schema      *json.RawMessage
}

// Apply changes t as u says and validates the result. On error t may be
// partly changed: callers apply to a copy.
func (u *EventTypeUpdate) Apply(t *EventType) error {
	if u.Description != nil {
		t.Description = *u.Description
	}
	if u.Example != nil {
		t.Example = *u.Example
	}
	if u.Schema != nil {
		t.Schema = *u.Schema
	}
	return t.Validate()
}
