package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

const invoiceSchema = `{"type":"object","required":["id","number","total"],"properties":{` +
	`"id":{"type":"string"},"number":{"type":"string"},"total":{"type":"string","pattern":"^[0-9]+\\.[0-9]{2}$"},` +
	`"customer":{"type":"object","required":["nif"],"properties":{"nif":{"type":"string"}}},` +
	`"lines":{"type":"array","items":{"type":"object","required":["amount"],"properties":{"amount":{"type":"string"}}}}}}`

func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	c := New(7, []*webhooks.EventType{
		{Name: "invoice.sent", Description: "Sent.", Schema: json.RawMessage(invoiceSchema)},
		{Name: "invoice.paid", Description: "Paid."},
		{Name: "account.updated", Description: "Updated."},
		{Name: "invoice.voided", Description: "Voided.", Archived: true},
		{Name: "quote.accepted", Description: "Accepted.", Archived: true},
	}, nil)
	if c.Version() != 7 || c.Empty() {
		t.Fatalf("got version %d, empty %t; want 7 and not empty", c.Version(), c.Empty())
	}
	return c
}

// wantError checks err's code and that its message holds each of parts.
func wantError(t *testing.T, what string, err error, code string, parts ...string) {
	t.Helper()
	if got := webhooks.ErrorCode(err); got != code {
		t.Errorf("%s: got %v, want %s", what, err, code)
		return
	}
	msg := webhooks.ErrorMessage(err)
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s: got message %q, want it to contain %q", what, msg, p)
		}
	}
}

func TestCheckEvent(t *testing.T) {
	c := testCatalog(t)
	ok := `{"id":"inv_1","number":"FAC-1","total":"12.10","customer":{"nif":"B12345674"},"lines":[{"amount":"12.10"}]}`
	for typ, obj := range map[string]string{
		"invoice.sent":               ok,
		"invoice.paid":               `{"anything":true}`,
		"ping":                       `{}`,
		"webhook_endpoint.failing":   `{}`,
		"webhook_delivery.exhausted": `{}`,
	} {
		if err := c.CheckEvent(typ, json.RawMessage(obj)); err != nil {
			t.Errorf("CheckEvent(%s, %s): %v", typ, obj, err)
		}
	}
	wantError(t, "a typo", c.CheckEvent("invoice.snet", json.RawMessage(ok)), webhooks.EUNKNOWNEVENTTYPE,
		`"invoice.snet" is not in the catalog`, `did you mean "invoice.sent"?`)
	wantError(t, "a name far from any", c.CheckEvent("shipment.dispatched", json.RawMessage(`{}`)), webhooks.EUNKNOWNEVENTTYPE,
		`"shipment.dispatched" is not in the catalog`, `the nearest declared type is`, `GET /v1/event_types`)
	wantError(t, "an archived type", c.CheckEvent("invoice.voided", json.RawMessage(`{}`)), webhooks.EUNKNOWNEVENTTYPE,
		`"invoice.voided" is archived`)

	for _, tc := range []struct{ obj, location, reason string }{
		{`{"id":"inv_1","number":"FAC-1"}`, "at data.object:", "missing property 'total'"},
		{`{"id":"inv_1","number":"FAC-1","total":12.1}`, "at data.object/total:", "got number, want string"},
		{`{"id":"inv_1","number":"FAC-1","total":"12.1"}`, "at data.object/total:", "does not match pattern"},
		{`{"id":"inv_1","number":"FAC-1","total":"1.00","customer":{}}`, "at data.object/customer:", "missing property 'nif'"},
		{`{"id":"inv_1","number":"FAC-1","total":"1.00","lines":[{"amount":"1"},{"amount":1}]}`, "at data.object/lines/1/amount:", "got number, want string"},
	} {
		wantError(t, tc.obj, c.CheckEvent("invoice.sent", json.RawMessage(tc.obj)), webhooks.EINVALIDEVENTDATA,
			"data.object does not match the schema of invoice.sent", tc.location, tc.reason)
	}
	wantError(t, "two failures", c.CheckEvent("invoice.sent", json.RawMessage(`{"id":1,"number":2,"total":"1.00"}`)),
		webhooks.EINVALIDEVENTDATA, "(and 1 more)")
}

func TestEmptyCatalog(t *testing.T) {
	// Archived types do not count: a catalog of archived types only is
	// empty, and types are free-form again.
	c := New(3, []*webhooks.EventType{{Name: "invoice.sent", Description: "x", Archived: true}}, nil)
	if !c.Empty() {
		t.Fatal("a catalog of archived types is not empty")
	}
	if err := c.CheckEvent("anything.goes", json.RawMessage(`{}`)); err != nil {
		t.Errorf("CheckEvent on an empty catalog: %v", err)
	}
	if err := c.CheckPatterns([]string{"anything.*", "some.type"}); err != nil {
		t.Errorf("CheckPatterns on an empty catalog: %v", err)
	}
	if got := c.Types(); len(got) != 0 {
		t.Errorf("Types: got %d, want none", len(got))
	}
}

func TestCheckPatterns(t *testing.T) {
	c := testCatalog(t)
	for _, ps := range [][]string{
		{"*"}, {"invoice.*"}, {"invoice.sent", "invoice.paid"}, {"account.*"}, {"account.updated"},
		{"webhook_endpoint.*"}, {"webhook_delivery.exhausted"},
	} {
		if err := c.CheckPatterns(ps); err != nil {
			t.Errorf("CheckPatterns(%v): %v", ps, err)
		}
	}
	wantError(t, "a typo", c.CheckPatterns([]string{"invoice.*", "invoice.snet"}), webhooks.EUNKNOWNEVENTTYPE,
		`"invoice.snet" matches no event type`, `did you mean "invoice.sent"?`)
	wantError(t, "a prefix typo", c.CheckPatterns([]string{"invoce.*"}), webhooks.EUNKNOWNEVENTTYPE,
		`"invoce.*" matches no event type`, `did you mean "invoice.*"?`)
	wantError(t, "a prefix of archived types only", c.CheckPatterns([]string{"quote.*"}), webhooks.EUNKNOWNEVENTTYPE,
		`"quote.*" matches no event type`)
	wantError(t, "an archived type", c.CheckPatterns([]string{"invoice.voided"}), webhooks.EUNKNOWNEVENTTYPE,
		`"invoice.voided" is an archived event type`)
}

func TestNew_KeepsCompiledSchemas(t *testing.T) {
	first := testCatalog(t)
	changed := `{"type":"object","required":["id"]}`
	next := New(8, []*webhooks.EventType{
		{Name: "invoice.sent", Description: "Sent, said better.", Schema: json.RawMessage(invoiceSchema)},
		{Name: "invoice.paid", Description: "Paid.", Schema: json.RawMessage(changed)},
	}, first)
	if next.entry("invoice.sent").schema != first.entry("invoice.sent").schema {
		t.Error("an unchanged schema was compiled again")
	}
	if next.entry("invoice.paid").schema == nil {
		t.Fatal("a new schema was not compiled")
	}
	wantError(t, "the new schema", next.CheckEvent("invoice.paid", json.RawMessage(`{}`)), webhooks.EINVALIDEVENTDATA, "missing property 'id'")
	if got := next.Types(); len(got) != 2 || got[0].Name != "invoice.paid" || got[1].Name != "invoice.sent" {
		t.Errorf("Types: got %v, want invoice.paid and invoice.sent in name order", got)
	}
}

func TestNew_StoredSchemaThatDoesNotCompile(t *testing.T) {
	// Only that type's events fail (as internal errors); the others go on.
	c := New(1, []*webhooks.EventType{
		{Name: "invoice.sent", Description: "x", Schema: json.RawMessage(`{"type":"no such type"}`)},
		{Name: "invoice.paid", Description: "x"},
	}, nil)
	if err := c.CheckEvent("invoice.sent", json.RawMessage(`{}`)); webhooks.ErrorCode(err) != webhooks.EINTERNAL {
		t.Errorf("an event of the broken type: got %v, want an internal error", err)
	}
	if err := c.CheckEvent("invoice.paid", json.RawMessage(`{}`)); err != nil {
		t.Errorf("an event of another type: %v", err)
	}
}

func TestCompile(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"type":"object"}`, invoiceSchema,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/a"}}}`,
		`{"$defs":{"money":{"type":"string"}},"properties":{"total":{"$ref":"#/$defs/money"}}}`,
	} {
		if _, err := Compile(json.RawMessage(s)); err != nil {
			t.Errorf("Compile(%s): %v", s, err)
		}
	}
	for _, tc := range []struct{ schema, reason string }{
		{`{"type":"no such type"}`, "at schema/type"},
		{`{"properties":{"total":{"minimum":"ten"}}}`, "at schema/properties/total/minimum"},
		{`{"required":"id"}`, "at schema/required"},
		{`{"pattern":"("}`, "schema is not a JSON Schema"},
		// The disk and the network are never read: a reference to another
		// document is refused, whatever it names.
		{`{"$ref":"file:///etc/passwd"}`, "must be self-contained"},
		{`{"properties":{"a":{"$ref":"https://example.com/schema.json"}}}`, "must be self-contained"},
		{`{"$ref":"#/$defs/missing"}`, "schema is not a JSON Schema"},
	} {
		_, err := Compile(json.RawMessage(tc.schema))
		wantError(t, tc.schema, err, webhooks.EINVALID, tc.reason)
		if err != nil && strings.Contains(webhooks.ErrorMessage(err), schemaURL) {
			t.Errorf("%s: the message %q names the internal URL", tc.schema, webhooks.ErrorMessage(err))
		}
	}
}

func TestSchemaCheck_Example(t *testing.T) {
	s, err := Compile(json.RawMessage(invoiceSchema))
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, "an example", s.Check(json.RawMessage(`{"id":"x","number":"y"}`), "example", "invoice.sent"),
		webhooks.EINVALIDEVENTDATA, "example does not match the schema of invoice.sent: at example: missing property 'total'")
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"invoice.sent", "invoice.sent", 0},
		{"invoice.snet", "invoice.sent", 1}, // a transposition is one edit
		{"invoice.sen", "invoice.sent", 1}, {"invoice.paid", "invoice.sent", 4}, {"ca", "abc", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q): got %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := distance(tc.b, tc.a); got != tc.want {
			t.Errorf("distance(%q, %q): got %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
