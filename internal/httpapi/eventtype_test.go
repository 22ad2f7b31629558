package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	webhooks "github.com/factuarea/webhooks"
)

// eventTypeFields are the fields of the event_type object, in order, as
// SPEC 16 decides them: a type's name is its key, so it has no id.
var eventTypeFields = []string{"object", "name", "description", "example", "schema", "archived", "created", "updated"}

// TestEventTypeObject: the event_type object is SPEC 16's, in the code,
// in openapi.yaml and in the README's catalog section alike: the same
// fields and no id, archived by DELETE with a 200 that answers the type,
// listed in name order with a name for cursor.
func TestEventTypeObject(t *testing.T) {
	now := time.Unix(1790590561, 0)
	b, err := json.Marshal(eventTypeObject(&webhooks.EventType{Name: "invoice.sent", Description: "Sent.", Created: now, Updated: now}))
	if err != nil {
		t.Fatal(err)
	}
	if got := objectKeys(t, b); !slices.Equal(got, eventTypeFields) {
		t.Errorf("the code's event_type: got fields %v, want %v", got, eventTypeFields)
	}

	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.Schemas["EventType"]
	if ref == nil || ref.Value == nil {
		t.Fatal("openapi.yaml has no EventType schema")
	}
	s := ref.Value
	var props []string
	for name := range s.Properties {
		props = append(props, name)
	}
	want := slices.Sorted(slices.Values(eventTypeFields))
	if slices.Sort(props); !slices.Equal(props, want) {
		t.Errorf("openapi.yaml's EventType: got properties %v, want %v", props, want)
	}
	if got := slices.Sorted(slices.Values(s.Required)); !slices.Equal(got, want) {
		t.Errorf("openapi.yaml's EventType: got required %v, want %v", got, want)
	}
	if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
		t.Error("openapi.yaml's EventType allows fields it does not name (an id among them): want additionalProperties: false")
	}
	item := doc.Paths.Find("/v1/event_types/{name}")
	if item == nil || item.Delete == nil {
		t.Fatal("openapi.yaml has no DELETE /v1/event_types/{name}")
	}
	if r := item.Delete.Responses.Status(200); r == nil || r.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/EventType" {
		t.Error("openapi.yaml's DELETE /v1/event_types/{name}: want a 200 that answers the EventType")
	}
	if item.Delete.Responses.Status(204) != nil {
		t.Error("openapi.yaml's DELETE /v1/event_types/{name} declares a 204: it answers the archived type, 200")
	}
	list := doc.Paths.Find("/v1/event_types")
	if list == nil || list.Get == nil || list.Get.Parameters.GetByInAndName("query", "starting_after") == nil ||
		!strings.Contains(list.Get.Parameters.GetByInAndName("query", "starting_after").Description, "name") {
		t.Error("openapi.yaml's GET /v1/event_types: want a starting_after that is a type's name")
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Errorf("openapi.yaml: %v", err)
	}

	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "event-types.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(page)
	shape := "`{object: \"event_type\", " + strings.Join(eventTypeFields[1:], ", ") + "}`"
	for _, phrase := range []string{shape, "no `id`",
		"in name order", "`starting_after=invoice.paid`", "`DELETE /v1/event_types/{name}` archives the type", "(200)"} {
		if !strings.Contains(section, phrase) {
			t.Errorf("docs/event-types.md does not say %q", phrase)
		}
	}
}

// objectKeys returns the keys of the JSON object b, in order.
func objectKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is not a JSON object", b)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// readmeSection returns the README's section that starts with heading, up
